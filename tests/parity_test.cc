// Parity with the oracle: every case of the golden files (tests/testdata, made
// by scripts/gen_golden.py and copied from ../shared/cases) planned exactly as
// `reshard batch` plans it (formats/batch_line.h) must give the oracle's answer:
// same ok, algorithm, trace and steps (mesh dim, src, dst, collective, logical
// shape), and costs to 1e-9 relative. Expected "no_path" errors must be ours too,
// except for the greedy S -> P and P(x) -> P(y) on size-1 mesh dims
// (IsSizeOnePartitionPlan).
// Each file is one test that reports every mismatching case id.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "formats/batch_line.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/util/test_util.h"

namespace reshard {
namespace {

using json = nlohmann::json;

using reshard::test_util::TestDataPath;

bool CostsMatch(double want, double got) {
  double diff = std::fabs(want - got);
  return diff <= 1e-12 || diff <= 1e-9 * std::max(std::fabs(want), std::fabs(got));
}

// Every difference between the oracle's answer and ours, in words.
std::vector<std::string> Differences(const json& want, const json& got) {
  std::vector<std::string> diffs;
  if (want.at("ok") != got.at("ok")) {
    diffs.push_back(absl::StrCat("ok: want ", want.at("ok").dump(), ", got ", got.dump()));
    return diffs;
  }
  if (!want.at("ok").get<bool>()) {
    std::string w = want.at("error"), g = got.at("error");
    if (g.rfind(w, 0) != 0)
      diffs.push_back(absl::StrCat("error: want \"", w, "...\", got \"", g, "\""));
    return diffs;
  }
  for (const char* key : {"algorithm", "trace"}) {
    if (want.at(key) != got.at(key)) {
      diffs.push_back(
          absl::StrCat(key, ": want ", want.at(key).dump(), ", got ", got.at(key).dump()));
    }
  }
  if (!CostsMatch(want.at("cost"), got.at("cost"))) {
    diffs.push_back(
        absl::StrCat("cost: want ", want.at("cost").dump(), ", got ", got.at("cost").dump()));
  }
  const json& ws = want.at("steps");
  const json& gs = got.at("steps");
  if (ws.size() != gs.size()) {
    diffs.push_back(absl::StrCat("steps: want ", ws.size(), ", got ", gs.size()));
    return diffs;
  }
  for (size_t i = 0; i < ws.size(); ++i) {
    for (const char* key : {"mesh_dim", "src", "dst", "collective", "logical_shape"}) {
      if (gs[i].at(key) != ws[i].at(key)) {
        diffs.push_back(absl::StrCat("step ", i, " ", key, ": want ", ws[i].at(key).dump(),
                                     ", got ", gs[i].at(key).dump()));
      }
    }
    if (!CostsMatch(ws[i].at("cost"), gs[i].at("cost"))) {
      diffs.push_back(absl::StrCat("step ", i, " cost: want ", ws[i].at("cost").dump(), ", got ",
                                   gs[i].at("cost").dump()));
    }
  }
  return diffs;
}

// The one deliberate difference from the oracle (spec §8, issues 9 and 41): a
// greedy request whose only S -> P and P(x) -> P(y) steps are on size-1 mesh
// dims has a plan here (those steps move nothing; PyTorch plans them too),
// where the oracle has no collective name for them and answers no_path. True
// when `got` is such a plan for case `c`.
bool IsSizeOnePartitionPlan(const json& c, const json& got) {
  if (!got.value("ok", false) || got.value("algorithm", "") != "greedy") return false;
  const std::vector<int64_t> mesh = c.at("mesh").get<std::vector<int64_t>>();
  int size_one = 0;
  for (const json& step : got.at("steps")) {
    const std::string src = step.at("src"), dst = step.at("dst");
    if (src[0] == 'R' || dst[0] != 'P') continue;
    if (mesh.at(step.at("mesh_dim").get<size_t>()) != 1 || step.at("cost") != 0.0) return false;
    ++size_one;
  }
  return size_one > 0;
}

void CheckFile(const std::string& name) {
  std::ifstream in(TestDataPath(name));
  ASSERT_TRUE(in.good()) << "cannot open " << TestDataPath(name);
  int cases = 0;
  std::vector<std::string> mismatched;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json c = json::parse(line);
    ASSERT_TRUE(c.contains("expected")) << name << ": a case without \"expected\": " << line;
    ++cases;
    // The oracle is PyTorch's planner: pytorch mode. Lines that name no cost
    // model would now be planned in native mode (issue 7), so pin the mode.
    if (!c.contains("mode")) c["mode"] = "pytorch";
    std::string text;
    AppendCaseResult(c, /*max_states=*/1000000, &text);
    json got = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (got.is_discarded()) {
      ADD_FAILURE() << name << ": the result is not JSON: " << text;
      continue;
    }
    if (c["expected"].value("error", "") == "no_path" && IsSizeOnePartitionPlan(c, got)) {
      continue;
    }
    std::vector<std::string> diffs = Differences(c["expected"], got);
    if (!diffs.empty()) {
      std::string id = c["id"].is_string() ? c["id"].get<std::string>() : c["id"].dump();
      mismatched.push_back(id);
      ADD_FAILURE() << name << " case " << id << ":\n  " << absl::StrJoin(diffs, "\n  ")
                    << "\n  input: " << line;
    }
  }
  EXPECT_GT(cases, 0) << name << " holds no cases";
  EXPECT_TRUE(mismatched.empty()) << mismatched.size() << " of " << cases << " cases of " << name
                                  << " differ from the oracle: " << absl::StrJoin(mismatched, ", ");
}

// PyTorch's own test traces (test_redistribute.py), answered by the oracle.
TEST(ParityTest, PytorchTests) { CheckFile("pytorch-tests.jsonl"); }

// The random examples.
TEST(ParityTest, Examples) { CheckFile("examples.jsonl"); }

// scripts/gen_golden.py: 1-D to 4-D meshes and tensors, every dtype, cost model,
// algorithm, shard orders, StridedShard input and Partial op.
TEST(ParityTest, Golden) { CheckFile("golden.jsonl"); }

}  // namespace
}  // namespace reshard
