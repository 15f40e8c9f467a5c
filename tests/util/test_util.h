// Helpers shared by the tests that read golden data or run the `reshard`
// binary as a user would.
#ifndef RESHARD_TESTS_UTIL_TEST_UTIL_H_
#define RESHARD_TESTS_UTIL_TEST_UTIL_H_

#include <string>
#include <vector>

namespace reshard::test_util {

// Path of tests/testdata/<name> in the test's runfiles (or relative to the
// workspace root outside Bazel).
std::string TestDataPath(const std::string& name);

std::string ReadFile(const std::string& path);

// Writes `bytes` (any bytes) to $TEST_TMPDIR/<name> (or /tmp/<name>) and
// returns its path.
std::string WriteTempFile(const std::string& name, const std::string& bytes);

// A JSON object whose one key is 5,000 bytes ending in a byte that is not
// UTF-8: a JSON parser's message about it quotes the whole key.
std::string JsonWithALongBrokenKey();

// `arg` quoted for /bin/sh.
std::string ShellQuote(const std::string& arg);

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs `command_line` through /bin/sh with `input` on stdin, capturing
// stdout and stderr through files in $TEST_TMPDIR.
CommandResult RunShell(const std::string& command_line, const std::string& input = "");

// Runs argv[0] with the other arguments, each quoted.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input = "");

}  // namespace reshard::test_util

#endif  // RESHARD_TESTS_UTIL_TEST_UTIL_H_
