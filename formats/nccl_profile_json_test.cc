// NCCL profiles as JSON (formats/nccl_profile_json.h, spec §6.4).
#include "formats/nccl_profile_json.h"

#include <string>

#include "base/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/util/test_util.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

TEST(NcclProfileJsonTest, RoundTripsEveryField) {
  NcclProfile p = *BuiltinNcclProfile("a100-8x200g");
  p.amd_cpu = true;
  p.nvswitch = false;
  const absl::StatusOr<NcclProfile> back = NcclProfileFromJson(NcclProfileToJson(p), "x.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, "a100-8x200g");
  EXPECT_EQ(back->arch, GpuArch::kAmpere);
  EXPECT_DOUBLE_EQ(back->nvlink_gbps, 240);
  EXPECT_DOUBLE_EQ(back->nic_gbps, 25);
  EXPECT_TRUE(back->amd_cpu);
  EXPECT_FALSE(back->nvswitch);
}

TEST(NcclProfileJsonTest, ErrorsNameTheFileAndTheKey) {
  nlohmann::json j = NcclProfileToJson(DefaultNcclProfile());
  j.erase("nic_gbps");
  EXPECT_THAT(NcclProfileFromJson(j, "p.json").status().message(),
              HasSubstr("p.json: key \"nic_gbps\": missing"));
  j = NcclProfileToJson(DefaultNcclProfile());
  j["arch"] = "kepler";
  EXPECT_THAT(NcclProfileFromJson(j, "p.json").status().message(), HasSubstr("\"arch\""));
  j = NcclProfileToJson(DefaultNcclProfile());
  j["alpha_us"] = 1;
  EXPECT_THAT(NcclProfileFromJson(j, "p.json").status().message(), HasSubstr("unknown key"));
  j = NcclProfileToJson(DefaultNcclProfile());
  j["nvlink_gbps"] = -1;
  EXPECT_THAT(NcclProfileFromJson(j, "p.json").status().message(), HasSubstr("nvlink_gbps"));
}

TEST(NcclProfileJsonTest, BuiltInNamesOrFiles) {
  EXPECT_EQ(ReadNcclProfile("b200-8x400g")->arch, GpuArch::kBlackwell);
  const absl::StatusOr<NcclProfile> missing = ReadNcclProfile("/nonexistent/p.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("h100-8x400g"));
}

// As profile files' (profile_json_test): the parser's message quotes the
// token where it stopped, shortened to valid UTF-8.
TEST(NcclProfileJsonTest, NotJsonErrorsQuoteAShortValidExcerpt) {
  const std::string path =
      test_util::WriteTempFile("long_key.json", test_util::JsonWithALongBrokenKey());
  const absl::StatusOr<NcclProfile> profile = ReadNcclProfile(path);
  ASSERT_FALSE(profile.ok());
  const std::string message(profile.status().message());
  EXPECT_THAT(message, HasSubstr("not JSON"));
  EXPECT_LE(message.size(), path.size() + 20 + kMaxJsonErrorBytes) << message;
  EXPECT_TRUE(IsValidUtf8(message)) << message;
}

}  // namespace
}  // namespace reshard
