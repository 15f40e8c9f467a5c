#include "cli/reshard_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace reshard::cli_test {
namespace {

using json = nlohmann::json;
using test_util::TestDataPath;

std::string& Binary() {
  static std::string* binary = new std::string;
  return *binary;
}

}  // namespace

const std::string& ReshardBinary() { return Binary(); }
void SetReshardBinary(const std::string& path) { Binary() = path; }

test_util::CommandResult RunReshard(const std::vector<std::string>& args,
                                    const std::string& input) {
  std::vector<std::string> argv = {ReshardBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test_util::RunCommand(argv, input);
}

json GoldenCase() {
  std::ifstream in(TestDataPath("pytorch-tests.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    json c = json::parse(line);
    if (c["expected"]["ok"] && c["expected"]["steps"].size() >= 2) return c;
  }
  ADD_FAILURE() << "no usable case in pytorch-tests.jsonl";
  return json();
}

std::string List(const json& ints) {
  std::vector<int64_t> v = ints.get<std::vector<int64_t>>();
  return absl::StrJoin(v, ",");
}

std::vector<std::string> PlanArgs(const json& c) {
  std::vector<std::string> args = {"plan",           "--mesh",       List(c["mesh"]), "--shape",
                                   List(c["shape"]), "--dtype",      c["dtype"],      "--src",
                                   c["src"],         "--dst",        c["dst"],        "--algorithm",
                                   c["algorithm"],   "--cost-model", c["cost_model"]};
  return args;
}

json PlanJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"plan", "--format", "json"});
  test_util::CommandResult r = RunReshard(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json got = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(got.is_discarded()) << r.out;
  return got;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/", name);
}

std::string BackendsBinary() {
  return absl::StrCat(ReshardBinary().substr(0, ReshardBinary().rfind('/') + 1),
                      "reshard-backends");
}

const std::vector<std::string> kTrainerToInference = {
    "plan",  "--mesh", "4,2",        "--shape", "16,12",       "--src", "S(0)S(1)",
    "--dst", "S(1)",   "--dst-mesh", "2",       "--dst-ranks", "8,9"};

std::vector<std::string> With(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool Close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

std::vector<json> JsonLines(const std::string& out) {
  std::vector<json> lines;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipWhitespace())) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << line;
    if (!j.is_discarded()) lines.push_back(std::move(j));
  }
  return lines;
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace reshard::cli_test
