// CRC32C, the CRC-32 of Castagnoli (polynomial 0x1EDC6F41, bit-reflected
// 0x82F63B78, initial value and final XOR 0xFFFFFFFF): the checksum of
// iSCSI, ext4 and SCTP, for which x86-64 has an instruction (SSE4.2's
// crc32). Detects every error burst of up to 32 bits, so every changed byte.
//
// Crc32c uses the instruction where the processor has it (asked once, at
// the first call) and a table of 8 x 256 entries otherwise; both give the
// same value.
//
// Thread-safety: pure functions; they neither allocate nor lock.
#ifndef ALLOCTRACE_BASE_CRC32C_H_
#define ALLOCTRACE_BASE_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace alloctrace {

// The CRC32C of data[0, size). Crc32c("123456789", 9) == 0xE3069283.
uint32_t Crc32c(const void* data, size_t size);
inline uint32_t Crc32c(std::string_view bytes) { return Crc32c(bytes.data(), bytes.size()); }

// The CRC32C of A followed by data[0, size), given crc == Crc32c(A).
uint32_t ExtendCrc32c(uint32_t crc, const void* data, size_t size);

namespace crc32c_internal {

// The two implementations behind ExtendCrc32c, for tests and benchmarks.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);
// Requires HardwareAvailable().
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size);
// Whether this processor has SSE4.2's crc32 (false where this code is not
// built for x86-64).
bool HardwareAvailable();

}  // namespace crc32c_internal
}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_CRC32C_H_
