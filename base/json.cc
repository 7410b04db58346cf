#include "alloctrace/base/json.h"

#include "alloctrace/base/utf8.h"

namespace alloctrace {

std::string JsonString(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    } else if (const size_t len = Utf8SequenceLength(s, i); len != 0) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER, for one bad byte
      ++i;
    }
  }
  out += '"';
  return out;
}

std::string JsonStrings(const std::vector<std::string>& strings) {
  std::string out = "[";
  for (size_t i = 0; i < strings.size(); ++i) {
    if (i > 0) out += ", ";
    out += JsonString(strings[i]);
  }
  return out + "]";
}

}  // namespace alloctrace
