// Profile files (formats/profile_json.h): the schema, its errors, and the
// committed measured profile against its built-in copy.
#include "formats/profile_json.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "tests/util/test_util.h"

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

json ValidV2() {
  json j = Valid();
  j["version"] = 2;
  j["tables"] = json::parse(R"([{"kind": "permute", "n": 4, "group": "{0,1}",
      "fit": {"alpha_us": 100, "beta_gbps": 0.5},
      "samples": [{"bytes": 4096, "us": 500, "min_us": 400, "max_us": 900},
                  {"bytes": 65536, "us": 800}]}])");
  return j;
}

std::string V2Error(const json& object) {
  return std::string(LoadedProfileFromJson(object, "p.json").status().message());
}

TEST(ProfileJsonTest, Version1FilesLoadWithoutTables) {
  const LoadedProfile p = *LoadedProfileFromJson(Valid(), "p.json");
  EXPECT_EQ(p.version, 1);
  EXPECT_TRUE(p.measured.tables.empty());
  EXPECT_EQ(p.measured.machine.inter_host.alpha_us, 9);
  json explicit_v1 = Valid();
  explicit_v1["version"] = 1;
  EXPECT_EQ(LoadedProfileFromJson(explicit_v1, "p.json")->version, 1);
}

TEST(ProfileJsonTest, Version2ReadsTablesAndAMissingSpreadIsTheMedian) {
  const LoadedProfile p = *LoadedProfileFromJson(ValidV2(), "p.json");
  ASSERT_EQ(p.version, 2);
  ASSERT_EQ(p.measured.tables.size(), 1u);
  const MeasuredTable& t = p.measured.tables[0];
  EXPECT_EQ(t.kind, StepKind::kPermute);
  EXPECT_EQ(t.n, 4);
  EXPECT_EQ(t.group, "{0,1}");
  EXPECT_EQ(t.fit.beta_gbps, 0.5);
  EXPECT_EQ(t.samples[0].max_us, 900);
  EXPECT_EQ(t.samples[1].min_us, 800);
  // Either version serves alpha-beta.
  EXPECT_EQ(ProfileFromJson(ValidV2(), "p.json")->intra_host.beta_gbps, 100);
}

TEST(ProfileJsonTest, Version2RoundTripsToTheSameModel) {
  const LoadedProfile p = *LoadedProfileFromJson(ValidV2(), "p.json");
  const LoadedProfile back = *LoadedProfileFromJson(MeasuredProfileToJson(p.measured), "mem");
  EXPECT_EQ(back.version, 2);
  EXPECT_EQ((*MakeMeasuredCostModel(back.measured, 8))->fingerprint(),
            (*MakeMeasuredCostModel(p.measured, 8))->fingerprint());
}

TEST(ProfileJsonTest, BadVersion2FilesNameTheFieldAndTheReason) {
  json j = ValidV2();
  j["version"] = 3;
  EXPECT_THAT(V2Error(j), HasSubstr("p.json: key \"version\": expected 1 or 2, got 3"));
  j = ValidV2();
  j.erase("tables");
  EXPECT_THAT(V2Error(j), HasSubstr("p.json: key \"tables\": missing"));
  j = Valid();
  j["tables"] = json::array();
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables\": measured tables need \"version\": 2"));
  j = ValidV2();
  j["tables"][0]["kind"] = "broadcast";
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables[0].kind\": expected a collective's name"));
  j = ValidV2();
  j["tables"][0]["samples"][1]["us"] = "slow";
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables[0].samples[1].us\": expected a number"));
  j = ValidV2();
  j["tables"][0]["samples"][1]["bytes"] = 1024;
  EXPECT_THAT(V2Error(j), HasSubstr("p.json: tables[0].samples[1].bytes: 1024 after 4096"));
  j = ValidV2();
  j["tables"][0]["n"] = 1.5;
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables[0].n\": expected an integer"));
  j = ValidV2();
  j["tables"][0]["speed"] = 1;
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables[0].speed\": unknown key"));
  j = ValidV2();
  j["tables"][0]["fit"].erase("alpha_us");
  EXPECT_THAT(V2Error(j), HasSubstr("key \"tables[0].fit.alpha_us\": missing"));
}

TEST(ProfileJsonTest, WritingIsAtomicAndRefusesInvalidUtf8) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/p.json");
  ASSERT_TRUE(WriteProfileFile(path, ValidV2()).ok());
  json bad = ValidV2();
  bad["name"] = "\xff";
  EXPECT_THAT(WriteProfileFile(path, bad).message(), HasSubstr("cannot write the profile"));
  // The earlier file is intact.
  EXPECT_EQ(ReadLoadedProfileFile(path)->version, 2);
}

// The JSON library's message quotes the token where parsing stopped: a file
// that is one long broken key must still give a short message of valid UTF-8
// (it was the whole key, 5 KB here, its bad byte included).
TEST(ProfileJsonTest, NotJsonErrorsQuoteAShortValidExcerpt) {
  const std::string path =
      test_util::WriteTempFile("long_key.json", test_util::JsonWithALongBrokenKey());
  const absl::StatusOr<CostProfile> profile = ReadProfileFile(path);
  ASSERT_FALSE(profile.ok());
  const std::string message(profile.status().message());
  EXPECT_THAT(message, HasSubstr("not JSON"));
  EXPECT_LE(message.size(), path.size() + 20 + kMaxJsonErrorBytes) << message;
  EXPECT_TRUE(IsValidUtf8(message)) << message;
}

// The built-in measured Gloo profile (bench's default) is a valid version 2 file.
TEST(ProfileJsonTest, CommittedMeasuredGlooProfileLoads) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/bench/profiles/gloo-loopback-measured.json");
  const absl::StatusOr<LoadedProfile> file = ReadLoadedProfileFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->version, 2);
  EXPECT_TRUE(MakeMeasuredCostModel(file->measured, 8).ok());
}

// The committed measurement and GlooLoopbackProfile() are one profile.
TEST(ProfileJsonTest, CommittedGlooProfileIsTheBuiltInOne) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/bench/profiles/gloo-loopback.json");
  const absl::StatusOr<CostProfile> file = ReadProfileFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*MakeAlphaBetaCostModel(*file, 8))->fingerprint(),
            (*MakeAlphaBetaCostModel(GlooLoopbackProfile(), 8))->fingerprint());
}

}  // namespace
}  // namespace reshard
