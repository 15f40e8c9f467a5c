// WriteOutputFile and CheckOutputPath (issue 44): `calibrate --out` through
// a symlink unlinked it from its target, turned a FIFO into a file and, as
// root, replaced /dev/full with a regular file.
#include "base/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("output_file_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The directory's entries: a failed or finished write leaves no temporary.
  int Entries() const {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, WritesANewFileAndReplacesARegularOne) {
  ASSERT_TRUE(WriteOutputFile(P("a.json"), "one", "--out").ok());
  EXPECT_EQ(Read(P("a.json")), "one");
  chmod(P("a.json").c_str(), 0640);
  ASSERT_TRUE(WriteOutputFile(P("a.json"), "two", "--out").ok());
  EXPECT_EQ(Read(P("a.json")), "two");
  EXPECT_EQ(fs::status(P("a.json")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(Entries(), 1);
}

// The command: the link stays a link, its target gets the profile.
TEST_F(OutputFileTest, WritesThroughSymlinksToTheirTarget) {
  { std::ofstream(P("t.json")) << "{}"; }
  fs::create_directory(P("sub"));
  fs::create_symlink("../t.json", P("sub/l1.json"));
  fs::create_symlink("sub/l1.json", P("l2.json"));
  ASSERT_TRUE(WriteOutputFile(P("l2.json"), "profile", "--out").ok());
  EXPECT_TRUE(fs::is_symlink(P("l2.json")));
  EXPECT_TRUE(fs::is_symlink(P("sub/l1.json")));
  EXPECT_EQ(Read(P("t.json")), "profile");
  EXPECT_EQ(*CheckOutputPath(P("l2.json"), "--out"), P("sub/../t.json"));
  // A dangling link creates its target.
  fs::create_symlink("new.json", P("dangling.json"));
  ASSERT_TRUE(WriteOutputFile(P("dangling.json"), "x", "--out").ok());
  EXPECT_TRUE(fs::is_symlink(P("dangling.json")));
  EXPECT_EQ(Read(P("new.json")), "x");
}

TEST_F(OutputFileTest, RefusesWhatIsNotARegularFileAndLeavesItAlone) {
  ASSERT_EQ(mkfifo(P("fifo").c_str(), 0600), 0);
  fs::create_directory(P("dir"));
  fs::create_symlink("fifo", P("to_fifo"));
  fs::create_symlink("loop", P("loop"));
  for (const char* name : {"fifo", "to_fifo", "dir", "loop"}) {
    absl::Status s = WriteOutputFile(P(name), "x", "--out");
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("--out: "));
    EXPECT_THAT(s.message(), HasSubstr(name));
    EXPECT_FALSE(CheckOutputPath(P(name), "--out").ok()) << name;
  }
  EXPECT_TRUE(fs::is_fifo(P("fifo")));
  EXPECT_TRUE(fs::is_directory(P("dir")));
  EXPECT_EQ(Entries(), 4);
  absl::Status device = WriteOutputFile("/dev/null", "x", "--out");
  EXPECT_THAT(device.message(), HasSubstr("not a regular file"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(OutputFileTest, ADirectoryThatCannotHoldTheFileIsRefusedUpFront) {
  absl::StatusOr<std::string> s = CheckOutputPath(P("missing/dir/a.json"), "--out");
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("cannot be written"));
  EXPECT_EQ(Entries(), 0);
}

}  // namespace
}  // namespace reshard
