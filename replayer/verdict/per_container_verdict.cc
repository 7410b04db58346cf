#include "alloctrace/replayer/verdict/per_container_verdict.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace alloctrace {

std::string AliasName(const ClassDef& def) {
  std::string name = def.name;
  if (def.tagged) {
    const size_t colons = name.rfind("::");
    if (colons != std::string::npos) name = name.substr(colons + 2);
  } else {
    // The type's identifiers joined by '_': std::, the library's inline
    // namespaces (__cxx11::) and punctuation dropped, and no word starting
    // with '_' (names with "__" or "_X" are the implementation's).
    std::string words;
    for (size_t i = 0; i < name.size();) {
      if (name.compare(i, 5, "std::") == 0) {
        i += 5;
        continue;
      }
      if (name.compare(i, 9, "__cxx11::") == 0) {
        i += 9;
        continue;
      }
      if (name[i] == '_' && (words.empty() || words.back() == '_')) {
        ++i;
        continue;
      }
      const unsigned char c = static_cast<unsigned char>(name[i]);
      if (std::isalnum(c) || c == '_') {
        words.push_back(static_cast<char>(c));
      } else if (!words.empty() && words.back() != '_') {
        words.push_back('_');
      }
      ++i;
    }
    while (!words.empty() && words.back() == '_') words.pop_back();
    name = words;
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    name = absl::StrCat("Class", def.id, name.empty() ? "" : "_", name);
  }
  return absl::StrCat(name, "Alloc");
}

std::string AliasLine(const ClassDef& def, const allocators::Adoption& adopt) {
  return absl::StrCat("template <class T> using ", AliasName(def), " = ",
                      adopt.cpp_type.empty() ? "std::allocator<T>" : adopt.cpp_type, ";");
}

}  // namespace alloctrace
