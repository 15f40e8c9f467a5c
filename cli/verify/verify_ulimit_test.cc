// verify, bench and calibrate under an address-space limit (`ulimit -v`). Not run under
// ASan or UBSan (tag no_sanitizer, scripts/test stage 4): a sanitizer's
// runtime reserves more address space than these limits allow.
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/reshard_test_util.h"
#include "gtest/gtest.h"
#include "tests/util/test_util.h"

namespace {

using Result = reshard::test_util::CommandResult;

// Issue 44: under `ulimit -v` verify and bench aborted with an uncaught
// std::system_error, or exited 1 "a case failed" with a gloo message per
// rank. Now: exit 3 and one message naming the limit.
TEST(VerifyFlagsTest, RanksOutOfMemoryExitThreeWithOneMessage) {
  const std::string bin = reshard::test_util::ShellQuote(reshard::cli_test::ReshardBinary());
  for (const char* limit : {"50000", "100000"}) {
    for (const char* command : {"verify", "bench --repeat 1"}) {
      const std::string line = absl::StrCat("ulimit -v ", limit, "; exec ", bin, " ", command,
                                            " --mesh 2,2 --shape 64,64 --src 'S(0)S(1)' --dst RR");
      Result r = reshard::test_util::RunCommand({"/bin/sh", "-c", line});
      EXPECT_EQ(r.exit_code, 3) << line << "\n" << r.out << r.err;
      EXPECT_TRUE(absl::StrContains(r.err, "ulimit")) << line << "\n" << r.err;
      EXPECT_EQ(absl::StrContains(r.err, "rank 1"), false) << r.err;
      const size_t first = r.err.find("out of resources");
      EXPECT_NE(first, std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("out of resources", first + 1), std::string::npos) << "said once:\n"
                                                                              << r.err;
    }
  }
}

// calibrate's timing buffers are checked against the same allowance before
// anything is timed: mesh 2,8 at 64M once ran the kernel out of memory.
// Under a 2 GB limit (1 GB allowed), 4 ranks at 256M need about 3 GiB.
TEST(VerifyFlagsTest, CalibrateRefusesBuffersPastTheMemoryAllowedUpFront) {
  const std::string bin = reshard::test_util::ShellQuote(reshard::cli_test::ReshardBinary());
  const std::string out = reshard::cli_test::TempPath("never-written.json");
  const std::string line =
      absl::StrCat("ulimit -v 2000000; exec ", bin, " calibrate --mesh 2,2 --sizes 4K,256M --out ",
                   reshard::test_util::ShellQuote(out));
  Result r = reshard::test_util::RunCommand({"/bin/sh", "-c", line});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--sizes")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "GiB")) << r.err;
  EXPECT_TRUE(r.out.empty()) << "timed before refusing: " << r.out;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << out << " was written";
}

}  // namespace
