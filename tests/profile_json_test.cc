// Profile files (cli/profile_json.h): the schema, its errors, and the
// committed measured profile against its built-in copy.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/profile_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/alpha_beta_cost_model.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json Valid() {
  return json::parse(R"({"name": "t", "intra_host": {"alpha_us": 2, "beta_gbps": 100},
                         "inter_host": {"alpha_us": 9, "beta_gbps": 20}, "memory_gbps": 500,
                         "fit": {"anything": [1, 2]}})");
}

std::string Error(const json& object) {
  return std::string(ProfileFromJson(object, "p.json").status().message());
}

TEST(ProfileJsonTest, ReadsEveryFieldAndIgnoresTheFitSection) {
  const CostProfile p = *ProfileFromJson(Valid(), "p.json");
  EXPECT_EQ(p.name, "t");
  EXPECT_EQ(p.intra_host.alpha_us, 2);
  EXPECT_EQ(p.intra_host.beta_gbps, 100);
  EXPECT_EQ(p.inter_host.alpha_us, 9);
  EXPECT_EQ(p.inter_host.beta_gbps, 20);
  EXPECT_EQ(p.memory_gbps, 500);
}

TEST(ProfileJsonTest, WrittenProfilesReadBackAlike) {
  const CostProfile p = DefaultGpuProfile();
  const CostProfile back = *ProfileFromJson(ProfileToJson(p), "mem");
  EXPECT_EQ((*MakeAlphaBetaCostModel(back, 8))->fingerprint(),
            (*MakeAlphaBetaCostModel(p, 8))->fingerprint());
}

TEST(ProfileJsonTest, ErrorsNameTheSourceAndTheKey) {
  json j = Valid();
  j["inter_host"].erase("beta_gbps");
  EXPECT_THAT(Error(j), HasSubstr("p.json: key \"inter_host.beta_gbps\": missing"));
  j = Valid();
  j["intra_host"]["alpha_us"] = "fast";
  EXPECT_THAT(Error(j), HasSubstr("key \"intra_host.alpha_us\": expected a number"));
  j = Valid();
  j["memroy_gbps"] = 1;
  EXPECT_THAT(Error(j), HasSubstr("key \"memroy_gbps\": unknown key"));
  j = Valid();
  j["memory_gbps"] = -1;
  EXPECT_THAT(Error(j), HasSubstr("p.json: cost profile: memory_gbps is -1"));
  EXPECT_THAT(Error(json::array()), HasSubstr("p.json: the profile must be a JSON object"));
}

TEST(ProfileJsonTest, MissingOrMalformedFilesNameThePath) {
  EXPECT_THAT(ReadProfileFile("/nonexistent/p.json").status().message(),
              HasSubstr("/nonexistent/p.json: cannot open"));
}

// The committed measurement and GlooLoopbackProfile() are one profile.
TEST(ProfileJsonTest, CommittedGlooProfileIsTheBuiltInOne) {
  const std::string path = absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                                        std::getenv("TEST_WORKSPACE"),
                                        "/bench/profiles/gloo-loopback.json");
  const absl::StatusOr<CostProfile> file = ReadProfileFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*MakeAlphaBetaCostModel(*file, 8))->fingerprint(),
            (*MakeAlphaBetaCostModel(GlooLoopbackProfile(), 8))->fingerprint());
}

}  // namespace
}  // namespace reshard
