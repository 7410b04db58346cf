// A seeded mutation loop over the fuzz entry (replay_program_fuzzer.h), for
// toolchains without libFuzzer and for tools/test.sh: every seed as is, then
// a fixed number of mutants (bit flips, interesting bytes, large varints,
// cut, duplicated and spliced ranges), each a crash, hang or contract break
// if the reader or the builder mishandles it. Deterministic: same seeds,
// same mutants.
//
// Seeds: traces/*.trace and format/testdata/*.trace. With arguments, runs
// the entry over those files only (to replay a libFuzzer finding):
//   bazel-bin/replayer/replay_program_fuzz_test crash-1234
// FUZZ_EXECUTIONS=N in the environment sets the number of mutants.
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "alloctrace/replayer/engine/replay_program_fuzzer.h"
#include "gtest/gtest.h"

namespace alloctrace {
namespace {

std::vector<std::string> g_files;  // from the command line

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> TracesIn(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 6 && name.substr(name.size() - 6) == ".trace")
      out.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void RunOne(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// One random edit of `s`; `other` is another seed, for splicing.
void Mutate(std::mt19937_64& rng, const std::string& other, std::string* s) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  switch (rng() % 8) {
    case 0:  // flip a bit
      if (!s->empty()) (*s)[pick(s->size())] ^= static_cast<char>(1 << (rng() % 8));
      break;
    case 1: {  // an interesting byte
      static const char kBytes[] = {
          0, 1, 0x7f, static_cast<char>(0x80), static_cast<char>(0xff), 0x0a, 0x12};
      if (!s->empty()) (*s)[pick(s->size())] = kBytes[rng() % sizeof kBytes];
      break;
    }
    case 2: {  // a large varint written over some bytes
      static const char* const kVarints[] = {"\xff\xff\xff\xff\x0f", "\xff\xff\xff\xff\x7f",
                                             "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
                                             "\xfd\xff\xff\xff\x0f"};
      const std::string v = kVarints[rng() % 4];
      const size_t at = pick(s->size());
      s->replace(at, std::min(v.size(), s->size() - at), v);
      break;
    }
    case 3:  // cut short
      s->resize(pick(s->size() + 1));
      break;
    case 4: {  // delete a range
      const size_t at = pick(s->size());
      s->erase(at, 1 + pick(16));
      break;
    }
    case 5: {  // duplicate a range
      const size_t at = pick(s->size());
      const std::string piece = s->substr(at, 1 + pick(32));
      s->insert(pick(s->size() + 1), piece);
      break;
    }
    case 6: {  // splice in a range of another seed
      const size_t at = pick(other.size());
      s->insert(pick(s->size() + 1), other.substr(at, 1 + pick(64)));
      break;
    }
    default: {  // a random byte
      if (!s->empty()) (*s)[pick(s->size())] = static_cast<char>(rng());
      break;
    }
  }
}

TEST(ReplayProgramFuzzTest, SeedsAndMutants) {
  if (!g_files.empty()) {
    for (const std::string& f : g_files) RunOne(ReadFile(f));
    return;
  }
  std::vector<std::string> seeds;
  for (const char* dir : {"format/testdata", "traces"}) {
    for (const std::string& path : TracesIn(dir)) seeds.push_back(ReadFile(path));
  }
  ASSERT_GE(seeds.size(), 10u) << "seed traces not found (run from the workspace root)";
  for (const std::string& seed : seeds) RunOne(seed);

#if defined(__SANITIZE_ADDRESS__)
  uint64_t executions = 2000;
#else
  uint64_t executions = 20000;
#endif
  if (const char* env = std::getenv("FUZZ_EXECUTIONS"))
    executions = std::strtoull(env, nullptr, 10);
  std::mt19937_64 rng(20261122);
  for (uint64_t i = 0; i < executions; ++i) {
    // Mostly the small seeds (fast, and every field is near an edge), a
    // prefix of the large ones otherwise.
    std::string input = seeds[rng() % seeds.size()];
    if (input.size() > 4096 && rng() % 4 != 0) input.resize(256 + rng() % 4096);
    const std::string& other = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) Mutate(rng, other, &input);
    RunOne(input);
  }
  RecordProperty("executions", static_cast<int>(executions + seeds.size()));
}

}  // namespace
}  // namespace alloctrace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) alloctrace::g_files.push_back(argv[i]);
  return RUN_ALL_TESTS();
}
