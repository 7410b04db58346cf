#include "alloctrace/base/cli_util.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "alloctrace/base/did_you_mean.h"

namespace alloctrace {

namespace {

// Abseil's own flags that print help or read flags from elsewhere: what
// they do is Abseil's business.
bool IsAbslOwnFlag(absl::string_view name) {
  for (absl::string_view own :
       {"help", "helpfull", "helpshort", "helppackage", "helpon", "helpmatch", "version",
        "only_check_args", "flagfile", "fromenv", "tryfromenv", "undefok"}) {
    if (name == own) return true;
  }
  return false;
}

bool IsHelpFlag(absl::string_view name) {
  return IsAbslOwnFlag(name) && name != "flagfile" && name != "fromenv" && name != "tryfromenv" &&
         name != "undefok";
}

// The flag's name as Abseil knows it: dashes read as underscores.
std::string Canonical(absl::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// Whether `value` parses as the flag's type; if not, what it should be. A
// type this function does not know is left to Abseil.
bool ValueParses(const absl::CommandLineFlag& flag, absl::string_view value, std::string* what) {
  std::string error;
  auto check = [&](auto* dummy, const char* words) {
    if (absl::ParseFlag(std::string(value), dummy, &error)) return true;
    *what = words;
    return false;
  };
  if (flag.IsOfType<bool>()) {
    bool v;
    return check(&v, "true or false");
  }
  if (flag.IsOfType<int>()) {
    int v;
    return check(&v, "an integer");
  }
  if (flag.IsOfType<int64_t>()) {
    int64_t v;
    return check(&v, "an integer");
  }
  if (flag.IsOfType<uint64_t>()) {
    uint64_t v;
    return check(&v, "a non-negative integer");
  }
  if (flag.IsOfType<double>()) {
    double v;
    return check(&v, "a number");
  }
  return true;  // strings, lists: any text
}

}  // namespace

std::vector<std::string> TakeProgramArgs(int& argc, char** argv, bool from_first_positional) {
  std::vector<std::string> program;
  for (int i = 1; i < argc; ++i) {
    const bool dashes = std::strcmp(argv[i], "--") == 0;
    if (!dashes && !(from_first_positional && argv[i][0] != '-')) continue;
    program.assign(argv + i + (dashes ? 1 : 0), argv + argc);
    argc = i;
    break;
  }
  return program;
}

namespace {

// `arg`'s value if it is --NAME=VALUE or -NAME=VALUE, else nullopt.
std::optional<absl::string_view> ValueOf(absl::string_view arg, absl::string_view name) {
  for (absl::string_view dashes : {"--", "-"}) {
    if (absl::StartsWith(arg, dashes) && absl::StartsWith(arg.substr(dashes.size()), name) &&
        arg.substr(dashes.size() + name.size()).substr(0, 1) == "=") {
      return arg.substr(dashes.size() + name.size() + 1);
    }
  }
  return std::nullopt;
}

// Names the user allowed to be unknown (--undefok=a,b), wherever given
// before a "--".
std::vector<std::string> UndefokNames(int argc, char* const* argv) {
  std::vector<std::string> undefok;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view a = argv[i];
    if (a == "--") break;
    if (const std::optional<absl::string_view> names = ValueOf(a, "undefok")) {
      for (absl::string_view n : absl::StrSplit(*names, ',')) undefok.push_back(Canonical(n));
    }
  }
  return undefok;
}

// One argument to check, and where it came from ("" for the command line,
// else " (in FILE)" or " (from the environment)"): the flags in files named
// by --flagfile and the environment's named by --fromenv and --tryfromenv
// are checked as Abseil will read them, in place of the flag that names
// them, so a flag given twice is found wherever the two come from.
struct Argument {
  std::string text;
  std::string where;
};

std::vector<Argument> ExpandedArguments(int argc, char* const* argv) {
  std::vector<Argument> args;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (const std::optional<absl::string_view> files = ValueOf(arg, "flagfile")) {
      for (absl::string_view file : absl::StrSplit(*files, ',', absl::SkipEmpty())) {
        std::ifstream in{std::string(file)};  // unreadable: Abseil says so
        for (std::string line; std::getline(in, line);) {
          const absl::string_view flag = absl::StripAsciiWhitespace(line);
          // Nested flag files are left to Abseil.
          if (absl::StartsWith(flag, "-") && !ValueOf(flag, "flagfile")) {
            args.push_back({std::string(flag), absl::StrCat(" (in ", file, ")")});
          }
        }
      }
      continue;
    }
    const std::optional<absl::string_view> from = ValueOf(arg, "fromenv");
    const std::optional<absl::string_view> tryfrom = ValueOf(arg, "tryfromenv");
    if (from || tryfrom) {
      for (absl::string_view name :
           absl::StrSplit(from ? *from : *tryfrom, ',', absl::SkipEmpty())) {
        // Unset: --fromenv's error is Abseil's; --tryfromenv sets nothing.
        if (const char* value = std::getenv(absl::StrCat("FLAGS_", name).c_str())) {
          args.push_back({absl::StrCat("--", name, "=", value), " (from the environment)"});
        }
      }
      continue;
    }
    args.push_back({std::string(arg), ""});
  }
  return args;
}

// The registered flags a person may type, sorted: what a suggestion names.
std::vector<std::string> SuggestableFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->IsRetired() || absl::StartsWith(name, "internal_") || IsAbslOwnFlag(name)) continue;
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Each flag's first spelling, by name: Abseil keeps the last of a flag
// given twice and drops the first without a word, which hides a slip
// (--policies=a ... --policies=b measures b alone).
class FlagsGiven {
 public:
  // "" the first time `name` is seen, else the message for the second.
  std::string Once(const std::string& name, absl::string_view typed) {
    for (const auto& [n, first] : given_) {
      if (n == name)
        return absl::StrCat(first, " and ", typed, ": the same flag twice; give it once");
    }
    given_.emplace_back(name, std::string(typed));
    return "";
  }

 private:
  std::vector<std::pair<std::string, std::string>> given_;
};

}  // namespace

std::string CheckCommandLineFlags(int argc, char* const* argv) {
  const std::vector<std::string> undefok = UndefokNames(argc, argv);
  const std::vector<std::string> names = SuggestableFlagNames();
  const std::vector<Argument> args = ExpandedArguments(argc, argv);
  FlagsGiven given;

  for (size_t i = 0; i < args.size(); ++i) {
    // Where it came from, after the flag as typed: "--budget=3 (in f.txt)".
    const std::string shown = args[i].text + args[i].where;
    const absl::string_view arg = args[i].text;
    // As Abseil: "-" and non-dashed words are positional.
    if (arg.size() < 2 || arg[0] != '-') continue;
    const absl::string_view dashes = arg.substr(0, arg[1] == '-' ? 2 : 1);
    absl::string_view body = arg.substr(dashes.size());
    const size_t eq = body.find('=');
    const absl::string_view typed = body.substr(0, eq);
    const bool has_value = eq != absl::string_view::npos;
    const absl::string_view value = has_value ? body.substr(eq + 1) : absl::string_view();
    const std::string name = Canonical(typed);
    if (IsAbslOwnFlag(name)) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      // --noquiet: the negative form of a boolean, which takes no value.
      const absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && positive->IsOfType<bool>()) {
        if (has_value) return absl::StrCat(dashes, typed, args[i].where, " takes no value");
        if (std::string twice = given.Once(name.substr(2), shown); !twice.empty()) return twice;
        continue;
      }
    }
    if (flag == nullptr || flag->IsRetired()) {
      if (std::find(undefok.begin(), undefok.end(), name) != undefok.end()) continue;
      std::string near = NearestName(name, names);
      if (near.empty()) {
        return absl::StrCat("unknown flag ", dashes, typed, args[i].where, "; see --help");
      }
      // Suggest in the spelling typed: with dashes if the user used them.
      if (typed.find('-') != absl::string_view::npos)
        std::replace(near.begin(), near.end(), '_', '-');
      return absl::StrCat("unknown flag ", dashes, typed, args[i].where, "; did you mean ", dashes,
                          near, "?");
    }
    if (std::string twice = given.Once(name, shown); !twice.empty()) return twice;
    std::string what;
    if (has_value) {
      if (!ValueParses(*flag, value, &what)) {
        return absl::StrCat(shown, ": '", value, "' is not ", what);
      }
      continue;
    }
    if (flag->IsOfType<bool>()) continue;  // --quiet: true
    // "--budget 3": the next argument is the value.
    if (i + 1 >= args.size() || !args[i].where.empty() || !args[i + 1].where.empty()) {
      return absl::StrCat(dashes, typed, args[i].where, " needs a value (", dashes, typed, "=...)");
    }
    ++i;
    const std::string& next = args[i].text;
    if (!ValueParses(*flag, next, &what)) {
      return absl::StrCat(dashes, typed, " ", next, ": '", next, "' is not ", what);
    }
  }
  return "";
}

namespace {

// absl::ParseCommandLine reports what it cannot parse and calls exit(1);
// usage errors here exit 2. While it parses, an exit becomes _Exit(2).
std::atomic<bool> parsing_flags{false};
void ExitUsageIfParsingFlags() {
  if (parsing_flags.load()) {
    std::fflush(nullptr);
    std::_Exit(2);
  }
}

}  // namespace

std::vector<char*> ParseCommandLineOrExitUsage(int argc, char** argv, const char* program) {
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-') continue;
    a.remove_prefix(a[1] == '-' ? 2 : 1);
    help = help || IsHelpFlag(Canonical(a.substr(0, a.find('='))));
  }
  if (!help) {
    const std::string error = CheckCommandLineFlags(argc, argv);
    if (!error.empty()) {
      std::fprintf(stderr, "%s: %s\n", program, error.c_str());
      std::exit(2);
    }
  }
  AcceptDashedFlags(argc, argv);
  if (help) return absl::ParseCommandLine(argc, argv);
  static const bool registered = std::atexit(ExitUsageIfParsingFlags) == 0;
  (void)registered;
  parsing_flags.store(true);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  parsing_flags.store(false);
  return positional;
}

}  // namespace alloctrace
