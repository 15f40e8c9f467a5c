// Helpers for the tests that run the `reshard` binary as a user would
// (//cli:reshard, passed as argv[1]; reshard_test_main.cc reads it): each
// command folder's *_command_test and cli/reshard_test.
#ifndef RESHARD_CLI_RESHARD_TEST_UTIL_H_
#define RESHARD_CLI_RESHARD_TEST_UTIL_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace reshard::cli_test {

// The reshard binary under test, and reshard-backends beside it.
const std::string& ReshardBinary();
void SetReshardBinary(const std::string& path);
std::string BackendsBinary();

// Runs the binary with `args` and `input` on stdin.
test_util::CommandResult RunReshard(const std::vector<std::string>& args,
                                    const std::string& input = "");

// The first case of pytorch-tests.jsonl with a non-trivial plan.
nlohmann::json GoldenCase();
// A JSON list of integers as a flag's value: [2,2] -> "2,2".
std::string List(const nlohmann::json& ints);
// `reshard plan` with the flags of golden case `c`.
std::vector<std::string> PlanArgs(const nlohmann::json& c);
// `reshard plan --format json` with `args`, expected to succeed, parsed.
nlohmann::json PlanJson(std::vector<std::string> args);

// $TEST_TMPDIR/<name> (or /tmp/<name>), and a text file written there.
std::string TempPath(const std::string& name);
void WriteText(const std::string& path, const std::string& text);

// Trainer FSDP x TP (4x2, ranks 0-7, f32 16 x 12) to inference TP 2 on
// ranks 8, 9: trainer rank (a, b) holds rows 4a.., columns 6b.. (96 bytes)
// and sends it to rank 8 + b, which must receive its whole 16 x 6 block.
extern const std::vector<std::string> kTrainerToInference;
// PyTorch's shard-order example on a 2 x 2 x 2 mesh (8 x 8 x 8 f32), with
// the oracle's trace and cost (spec §5, §8): pytorch mode, as the oracle is
// PyTorch's planner.
inline constexpr char kPytorchSrc[] = "S(0)[1]S(0)[0]S(0)[2]";
inline constexpr char kPytorchDst[] = "RS(0)[0]S(0)[1]";
inline constexpr char kPytorchTrace[] =
    "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RS(0)[0]S(0)[1]";
inline constexpr double kPytorchCost = 14.408155709661397;

// Equal to a relative 1e-9 (at least 1e-9 absolute): a cost printed and read.
bool Close(double a, double b);
// Each non-blank line of `out` as JSON (a line that does not parse fails the
// test and is skipped).
std::vector<nlohmann::json> JsonLines(const std::string& out);

// `args` followed by `more`.
std::vector<std::string> With(std::vector<std::string> args, std::vector<std::string> more);

}  // namespace reshard::cli_test

#endif  // RESHARD_CLI_RESHARD_TEST_UTIL_H_
