#include "cli/flags.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/utf8.h"

namespace reshard {

std::string FlagValues::Get(absl::string_view name, absl::string_view fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<FlagValues> FlagParser::Parse(const std::vector<std::string>& args) const {
  FlagValues out;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "-h") arg = "--help";
    if (!absl::ConsumePrefix(&arg, "--") || arg.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", Abbreviate(args[i], 64),
                       "\" (flags start with --; see reshard ", command_, " --help)"));
    }
    absl::string_view name = arg;
    absl::string_view value;
    bool inline_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    const FlagDef* def = nullptr;
    for (const FlagDef& d : defs_) {
      if (d.name == name) def = &d;
    }
    if (def == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", Abbreviate(name, 64),
                                                     " for reshard ", command_, " (see reshard ",
                                                     command_, " --help)"));
    }
    if (!def->takes_value && inline_value) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
    }
    if (def->takes_value && !inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      // "--src --format text": the value is missing; taking "--format" as it
      // would blame "text" instead. A value that starts with "--" goes as --flag=value.
      if (absl::StartsWith(args[i + 1], "--")) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value, got the flag ", Abbreviate(args[i + 1], 64),
                         " (to pass a value starting with --, write --", name, "=VALUE)"));
      }
      value = args[++i];
    }
    if (!out.values_.emplace(std::string(name), std::string(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " is given more than once"));
    }
  }
  return out;
}

absl::StatusOr<int64_t> ParseInt(absl::string_view flag, absl::string_view text) {
  int64_t v;
  if (!absl::SimpleAtoi(text, &v)) {
    absl::string_view digits = absl::StripPrefix(text, "-");
    const bool overflow = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": \"", Abbreviate(text, 64), "\" is ",
                     overflow ? "out of range for an integer" : "not an integer"));
  }
  return v;
}

absl::StatusOr<int64_t> IntFlagIn(const FlagValues& flags, absl::string_view name, int64_t fallback,
                                  int64_t lo, int64_t hi) {
  if (!flags.Has(name)) return fallback;
  absl::StatusOr<int64_t> v = ParseInt(name, flags.Get(name));
  if (!v.ok()) return v;
  if (*v < lo || *v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": ", *v, " is out of range; must be between ", lo, " and ", hi));
  }
  return *v;
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view flag, absl::string_view text) {
  int shift = 0;
  absl::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  int64_t v;
  const bool parsed = absl::SimpleAtoi(digits, &v);
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (all_digits && (!parsed || v > (std::numeric_limits<int64_t>::max() >> shift))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": \"", Abbreviate(text, 64),
                     "\" is out of range (at most 2^63-1 bytes, about 8 EiB)"));
  }
  if (!parsed || v < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": \"", Abbreviate(text, 64),
        "\" is not a positive size in bytes (an integer, optionally with K, M, G or T)"));
  }
  return v << shift;
}

absl::Status RequireOneCaseFlags(const FlagValues& flags,
                                 std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (!flags.Has(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " is required for one case (or give --random N; see --help)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseRandomCount(const FlagValues& flags,
                                         std::initializer_list<const char*> one_case) {
  for (const char* name : one_case) {
    if (flags.Has(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " describes one case; it cannot go with --random"));
    }
  }
  absl::StatusOr<int64_t> count = ParseInt("random", flags.Get("random"));
  if (count.ok() && *count < 0) {
    return absl::InvalidArgumentError("--random: the number of cases must be >= 0");
  }
  return count;
}

absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view flag, absl::string_view text) {
  std::vector<int64_t> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int64_t v;
    if (!absl::SimpleAtoi(item, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": \"", Abbreviate(text, 64), "\" is not a list of integers"));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ParseRankList(absl::string_view flag, absl::string_view text) {
  std::vector<int64_t> out;
  absl::flat_hash_set<int64_t> seen;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int64_t v;
    const bool digits = !item.empty() && item.find_first_not_of("-+0123456789") == item.npos;
    if (!absl::SimpleAtoi(item, &v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, ": \"", Abbreviate(item, 64), "\" in \"", Abbreviate(text, 64), "\" is ",
          digits ? "out of range" : "not an integer", " (a comma-separated list of global ranks)"));
    }
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": rank ", v, " is negative (global ranks start at 0)"));
    }
    if (!seen.insert(v).second) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": rank ", v, " appears twice"));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace reshard
