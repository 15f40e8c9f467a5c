#include "tests/util/test_util.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace reshard::test_util {

std::string TestDataPath(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr && workspace != nullptr) {
    return absl::StrCat(srcdir, "/", workspace, "/tests/testdata/", name);
  }
  return absl::StrCat("tests/testdata/", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string WriteTempFile(const std::string& name, const std::string& bytes) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string JsonWithALongBrokenKey() {
  return absl::StrCat("{\"", std::string(5000, '5'), "\xff\": 1}");
}

std::string ShellQuote(const std::string& arg) {
  return absl::StrCat("'", absl::StrReplaceAll(arg, {{"'", "'\\''"}}), "'");
}

CommandResult RunShell(const std::string& command_line, const std::string& input) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  {
    std::ofstream in(dir + "/stdin");
    in << input;
  }
  const std::string command =
      absl::StrCat(command_line, " <", dir, "/stdin >", dir, "/stdout 2>", dir, "/stderr");
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(dir + "/stdout");
  r.err = ReadFile(dir + "/stderr");
  return r;
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input) {
  std::vector<std::string> quoted;
  for (const std::string& a : argv) quoted.push_back(ShellQuote(a));
  return RunShell(absl::StrJoin(quoted, " "), input);
}

}  // namespace reshard::test_util
