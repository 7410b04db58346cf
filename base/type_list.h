// TypeList<A...>: a compile-time list of types, and Concat<L...> to join
// lists. The pool catalog (pool/catalog.h) and the replayer's allocator
// registry are such lists, so that everything listed is also instantiated,
// named and tested from the one list.
//
// Thread-safety: types only.
#ifndef ALLOCTRACE_BASE_TYPE_LIST_H_
#define ALLOCTRACE_BASE_TYPE_LIST_H_

#include <cstddef>

namespace alloctrace {

template <typename... Types>
struct TypeList {
  static constexpr size_t kSize = sizeof...(Types);
};

namespace type_list_internal {

template <typename... Lists>
struct ConcatImpl {
  using type = TypeList<>;
};
template <typename... A>
struct ConcatImpl<TypeList<A...>> {
  using type = TypeList<A...>;
};
template <typename... A, typename... B, typename... Rest>
struct ConcatImpl<TypeList<A...>, TypeList<B...>, Rest...> {
  using type = typename ConcatImpl<TypeList<A..., B...>, Rest...>::type;
};

}  // namespace type_list_internal

// The lists' types in order, as one list.
template <typename... Lists>
using Concat = typename type_list_internal::ConcatImpl<Lists...>::type;

}  // namespace alloctrace

#endif  // ALLOCTRACE_BASE_TYPE_LIST_H_
