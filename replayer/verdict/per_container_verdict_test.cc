#include "alloctrace/replayer/verdict/per_container_verdict.h"

#include "gtest/gtest.h"

namespace alloctrace {
namespace {

TEST(AliasTest, ATagIsNamedByItsLastName) {
  const ClassDef tag{1, "app::book::OrderIndex", 48, true};
  EXPECT_EQ(AliasName(tag), "OrderIndexAlloc");
  allocators::Adoption adopt;
  adopt.cpp_type = "alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded>";
  EXPECT_EQ(AliasLine(tag, adopt),
            "template <class T> using OrderIndexAlloc = "
            "alloctrace::pool::SlabAllocator<T, alloctrace::pool::SingleThreaded>;");
  EXPECT_EQ(AliasLine(tag, allocators::Adoption()),
            "template <class T> using OrderIndexAlloc = std::allocator<T>;");
}

TEST(AliasTest, AValueTypeIsNamedByItsWords) {
  EXPECT_EQ(AliasName(ClassDef{2, "std::pair<const long, Msg>", 16, false}),
            "pair_const_long_MsgAlloc");
  EXPECT_EQ(AliasName(ClassDef{3, "int", 4, false}), "intAlloc");
  EXPECT_EQ(AliasName(ClassDef{4, "", 4, false}), "Class4Alloc");
  EXPECT_EQ(AliasName(ClassDef{5, "(anonymous namespace)::Key", 4, false}),
            "anonymous_namespace_KeyAlloc");
  EXPECT_EQ(AliasName(ClassDef{6,
                               "std::__cxx11::basic_string<char, std::char_traits<char>, "
                               "alloctrace::TraceAllocator<char, void, char> >",
                               32, false}),
            "basic_string_char_char_traits_char_alloctrace_TraceAllocator_char_void_charAlloc");
  EXPECT_EQ(AliasName(ClassDef{7, "_Node<__int128>", 16, false}), "Node_int128Alloc");
}

}  // namespace
}  // namespace alloctrace
