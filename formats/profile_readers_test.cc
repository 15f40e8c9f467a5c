// Every profile kind is read by one bounded reader (ReadProfileJson,
// profile_json.h) with the same messages (issue 44: the nccl reader crashed
// on deep JSON, read /dev/zero until memory ran out, read a 30 MB file whole
// and called a directory "not JSON").
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "formats/nccl_profile_json.h"
#include "formats/profile_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Each reader's error for `path`, or "" when it read a profile.
std::vector<std::string> Errors(const std::string& path) {
  const std::vector<std::function<absl::Status(const std::string&)>> readers = {
      [](const std::string& p) { return ReadNcclProfile(p).status(); },
      [](const std::string& p) { return ReadProfileFile(p).status(); },
      [](const std::string& p) { return ReadLoadedProfileFile(p).status(); },
  };
  std::vector<std::string> errors;
  for (const auto& read : readers) {
    const absl::Status s = read(path);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << path << ": " << s;
    errors.emplace_back(s.message());
  }
  return errors;
}

TEST(ProfileReadersTest, EveryKindRefusesHostileFilesAlike) {
  const std::string deep =
      TempFile("deep.json", std::string(100000, '[') + std::string(100000, ']'));
  const std::string big = TempFile("big.json", std::string(kMaxProfileFileBytes + 1, ' '));
  const std::string dir = ::testing::TempDir() + "/a_dir";
  std::filesystem::create_directories(dir);
  const struct {
    std::string path, says;
  } cases[] = {
      {deep, "nested deeper than 32"},
      {"/dev/zero", "not a regular file or a pipe"},
      {dir, "a directory, not a file"},
      {big, "over the limit of 16777216"},
  };
  for (const auto& c : cases) {
    const std::vector<std::string> errors = Errors(c.path);
    for (const std::string& e : errors) {
      EXPECT_THAT(e, HasSubstr(c.says));
      EXPECT_EQ(e, errors[0]) << "every kind says the same";
    }
  }
}

}  // namespace
}  // namespace reshard
