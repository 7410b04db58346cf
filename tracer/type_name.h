// TypeName<T>(): the name of type T as the compiler spells it, at compile
// time, from __PRETTY_FUNCTION__ (GCC and Clang). It names a container's
// class in a trace (tracer/trace_allocator.h).
//
// The spelling is the compiler's, not a canonical one: GCC writes
// `std::pair<const long int, Msg>` and `{anonymous}::Tag` where Clang writes
// `std::pair<const long, Msg>` and `(anonymous namespace)::Tag`; both leave
// out template arguments left at their defaults (`std::map<int, int>`).
// Other compilers get "unnamed type".
//
// Thread-safety: constant expressions, safe anywhere.
#ifndef ALLOCTRACE_TRACER_TYPE_NAME_H_
#define ALLOCTRACE_TRACER_TYPE_NAME_H_

#include <cstddef>
#include <string_view>

namespace alloctrace {
namespace type_name_internal {

template <typename T>
constexpr std::string_view PrettyFunction() {
#if defined(__GNUC__) || defined(__clang__)
  return __PRETTY_FUNCTION__;
#else
  return "";
#endif
}

// The type after "T = " in PrettyFunction<T>()'s text: "... [with T = X; ...]"
// (GCC) or "... [T = X]" (Clang). The type ends at the first ';' or ']' not
// inside brackets of its own (an array type has them: `int [4]`).
constexpr std::string_view TypeNameIn(std::string_view pretty) {
  constexpr std::string_view kGcc = "[with T = ";
  constexpr std::string_view kClang = "[T = ";
  size_t start = pretty.find(kGcc);
  if (start != std::string_view::npos) {
    start += kGcc.size();
  } else if (start = pretty.find(kClang); start != std::string_view::npos) {
    start += kClang.size();
  } else {
    return "unnamed type";
  }
  int depth = 0;
  size_t end = start;
  for (; end < pretty.size(); ++end) {
    const char c = pretty[end];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == '>' || c == ')' || c == '}') {
      --depth;
    } else if (c == ']') {
      if (depth == 0) break;
      --depth;
    } else if (c == ';' && depth == 0) {
      break;
    }
  }
  while (end > start && pretty[end - 1] == ' ') --end;
  return pretty.substr(start, end - start);
}

}  // namespace type_name_internal

template <typename T>
constexpr std::string_view TypeName() {
  return type_name_internal::TypeNameIn(type_name_internal::PrettyFunction<T>());
}

}  // namespace alloctrace

#endif  // ALLOCTRACE_TRACER_TYPE_NAME_H_
