// Command-line flags for the `reshard` subcommands: `--flag value` and
// `--flag=value`, each subcommand declaring its own flags, so that a typo or a
// missing value is reported with the flag's name.
//
//   FlagParser flags("plan", {{"mesh", true}, {"help", false}});
//   absl::StatusOr<FlagValues> values = flags.Parse(args);
//   // values->Get("mesh"), values->Has("help")
#ifndef RESHARD_CLI_FLAGS_H_
#define RESHARD_CLI_FLAGS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

struct FlagDef {
  std::string name;  // without the leading "--"
  bool takes_value;  // false: a switch such as --help
};

class FlagValues {
 public:
  bool Has(absl::string_view name) const { return values_.count(std::string(name)) > 0; }
  // The value given, or `fallback` when the flag is absent.
  std::string Get(absl::string_view name, absl::string_view fallback = "") const;

 private:
  friend class FlagParser;
  std::map<std::string, std::string> values_;
};

class FlagParser {
 public:
  FlagParser(std::string command, std::vector<FlagDef> defs)
      : command_(std::move(command)), defs_(std::move(defs)) {}

  // InvalidArgument naming the flag for an unknown flag, a missing value, a
  // value given to a switch, a repeated flag, or a positional argument.
  absl::StatusOr<FlagValues> Parse(const std::vector<std::string>& args) const;

 private:
  std::string command_;
  std::vector<FlagDef> defs_;
};

// OK when every flag of `names` (without "--") is given; otherwise
// InvalidArgument "--<name> is required for one case (or give --random N;
// see --help)" for the first missing one (verify's one-case flags).
absl::Status RequireOneCaseFlags(const FlagValues& flags, std::initializer_list<const char*> names);

// The N of `--random N`, refusing any flag of `one_case` beside it:
// InvalidArgument "--<name> describes one case; it cannot go with --random",
// or for N not an integer >= 0.
absl::StatusOr<int64_t> ParseRandomCount(const FlagValues& flags,
                                         std::initializer_list<const char*> one_case);

// "2,2,2" -> {2, 2, 2}. InvalidArgument `--<flag>: "2,x" is not a list of integers`
// (also for empty items and values outside int64).
absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view flag, absl::string_view text);
// A list of global ranks, "8,9" -> {8, 9} (--src-ranks, --dst-ranks: a
// mesh's ranks in row-major order of its coordinates). InvalidArgument
// naming the flag and the bad item: not an integer, out of int64's range,
// negative, or given twice. Whether it has its mesh's size is checked where
// the mesh is known (PlanCrossMesh).
absl::StatusOr<std::vector<int64_t>> ParseRankList(absl::string_view flag, absl::string_view text);
// "8" -> 8, InvalidArgument `--<flag>: "x" is not an integer` otherwise
// (`... is out of range` for digits past int64).
absl::StatusOr<int64_t> ParseInt(absl::string_view flag, absl::string_view text);
// The flag's integer (`fallback` when it is absent), InvalidArgument
// `--<flag>: V is out of range; must be between LO and HI` outside [lo, hi]:
// one rule for every bounded integer flag (--seed, --repeat, --timeout, ...).
absl::StatusOr<int64_t> IntFlagIn(const FlagValues& flags, absl::string_view name, int64_t fallback,
                                  int64_t lo, int64_t hi);
// "512M" -> 512 << 20: an integer with an optional suffix K, M, G or T
// (powers of 1024). InvalidArgument naming the flag otherwise.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view flag, absl::string_view text);

}  // namespace reshard

#endif  // RESHARD_CLI_FLAGS_H_
