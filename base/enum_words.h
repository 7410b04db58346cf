// EnumWord tables: one {value, word} table per enum serves both printing a
// value (WordOf) and parsing a word back (ParseWord), so the words a flag
// takes and the words a report prints cannot drift apart.
//
//   enum class Clock { kCpu, kWall };
//   inline constexpr EnumWord<Clock> kClockWords[] = {{Clock::kCpu, "cpu"},
//                                                     {Clock::kWall, "wall"}};
//   WordOf(kClockWords, Clock::kWall)   // "wall"
//   ParseWord(kClockWords, "cpu")       // Clock::kCpu
//   WordList(kClockWords)               // "cpu or wall"
//
// Thread-safety: pure functions over constant tables.
#ifndef ALLOCTRACE_BASE_ENUM_WORDS_H_
#define ALLOCTRACE_BASE_ENUM_WORDS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace alloctrace {

template <typename E>
struct EnumWord {
  E value;
  const char* word;
};

// The word of `value`; "?" if the table lacks it (a table missing a value
// of its enum is a bug the table's unit test catches).
template <typename E, size_t N>
constexpr const char* WordOf(const EnumWord<E> (&table)[N], E value) {
  for (const EnumWord<E>& e : table) {
    if (e.value == value) return e.word;
  }
  return "?";
}

// The value whose word is `word`, nullopt if none.
template <typename E, size_t N>
std::optional<E> ParseWord(const EnumWord<E> (&table)[N], absl::string_view word) {
  for (const EnumWord<E>& e : table) {
    if (word == e.word) return e.value;
  }
  return std::nullopt;
}

// The table's words as alternatives, in its order: "a, b or c".
template <typename E, size_t N>
std::string WordList(const EnumWord<E> (&table)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += table[i].word;
  }
  return out;
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_ENUM_WORDS_H_
