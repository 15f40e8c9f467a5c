// RunTogetherOnThreads under a memory limit (issue 44: `reshard verify` and
// `bench` aborted with an uncaught std::system_error under `ulimit -v`).
#include "collectives/gloo/thread_ranks.h"

#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(RunTogetherOnThreadsTest, RunsEveryCall) {
  std::atomic<int> calls{0};
  const std::vector<absl::Status> s = RunTogetherOnThreads(8, [&](int64_t i) {
    ++calls;
    return i == 3 ? absl::InternalError("three") : absl::OkStatus();
  });
  ASSERT_EQ(s.size(), 8u);
  EXPECT_EQ(calls, 8);
  EXPECT_EQ(s[3].message(), "three");
  EXPECT_TRUE(s[2].ok());
}

// In a child process (a death test) whose address space cannot hold 256
// thread stacks: no call runs, every status is the same ResourceExhausted,
// and the process returns instead of aborting.
void UnderAMemoryLimit() {
  rlimit limit{size_t{512} << 20, size_t{512} << 20};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::exit(2);
  std::atomic<int> calls{0};
  const std::vector<absl::Status> s = RunTogetherOnThreads(256, [&](int64_t) {
    ++calls;
    return absl::OkStatus();
  });
  bool same = s.size() == 256;
  for (const absl::Status& one : s) {
    same = same && absl::IsResourceExhausted(one) && one == s[0] &&
           one.message().find("ulimit") != absl::string_view::npos;
  }
  std::exit(same && calls == 0 ? 0 : 1);
}

TEST(RunTogetherOnThreadsDeathTest, AThreadThatCannotStartFailsEveryCallOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(UnderAMemoryLimit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace reshard
