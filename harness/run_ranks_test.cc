// The rank launcher (harness/run_ranks.h): a function runs on every rank of
// the mesh, as threads and as processes, each rank's output comes back
// indexed by rank, and a failing rank is reported as that rank's error while
// the others' outputs still arrive.
//
// For processes the launcher starts this test binary again with
// `child_args` plus --rank R --store-dir DIR --job JOB; main() below then
// acts as that rank (RunChildRank) instead of running the tests.
#include "harness/run_ranks.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "harness/mesh_barrier.h"
#include "mesh/device_mesh.h"

namespace reshard {
namespace {

constexpr int64_t kFailingRank = 2;

DeviceMesh Mesh() { return *DeviceMesh::Create({2, 2}); }

// Every rank meets the others (a barrier over the mesh), then answers with
// its rank and coordinate; rank kFailingRank fails when `fail` is set.
RankFunction Answer(bool fail) {
  return [fail](Rank& rank) -> absl::StatusOr<std::string> {
    if (absl::Status s = MeshBarrier(rank.comm); !s.ok()) return s;
    if (fail && rank.comm.rank() == kFailingRank) {
      return absl::FailedPreconditionError("this rank was told to fail");
    }
    const std::vector<int64_t> c = rank.comm.coordinate();
    return absl::StrCat("rank ", rank.comm.rank(), " at ", c[0], ",", c[1]);
  };
}

LaunchOptions Launch(RanksOn on, bool fail) {
  LaunchOptions launch;
  launch.on = on;
  // A dead rank's peers wait this long for it before they give up.
  launch.gloo.timeout = absl::Seconds(5);
  launch.child_args = {"run_ranks_test", fail ? "fail" : "ok"};
  launch.wait = absl::Seconds(60);
  return launch;
}

void ExpectEveryRankAnswered(const std::vector<absl::StatusOr<std::string>>& out, bool fail) {
  ASSERT_EQ(out.size(), 4u);
  const DeviceMesh mesh = Mesh();
  for (int64_t r = 0; r < 4; ++r) {
    if (fail && r == kFailingRank) {
      ASSERT_FALSE(out[r].ok());
      EXPECT_TRUE(absl::StrContains(out[r].status().message(), "this rank was told to fail"))
          << out[r].status();
      continue;
    }
    ASSERT_TRUE(out[r].ok()) << "rank " << r << ": " << out[r].status();
    const std::vector<int64_t> c = mesh.Coordinate(r);
    EXPECT_EQ(*out[r], absl::StrCat("rank ", r, " at ", c[0], ",", c[1]));
  }
}

TEST(RunRanksTest, ThreadsRunTheFunctionOnEveryRank) {
  ExpectEveryRankAnswered(RunRanks(Mesh(), Launch(RanksOn::kThreads, false), Answer(false)), false);
}

TEST(RunRanksTest, ThreadsReportTheFailingRank) {
  const auto out = RunRanks(Mesh(), Launch(RanksOn::kThreads, true), Answer(true));
  ExpectEveryRankAnswered(out, true);
  EXPECT_TRUE(absl::StartsWith(FirstRankError(out).message(), "rank 2: ")) << FirstRankError(out);
}

TEST(RunRanksTest, ProcessesRunTheFunctionOnEveryRank) {
  ExpectEveryRankAnswered(RunRanks(Mesh(), Launch(RanksOn::kProcesses, false), Answer(false)),
                          false);
}

TEST(RunRanksTest, ProcessesReportTheFailingRank) {
  const auto out = RunRanks(Mesh(), Launch(RanksOn::kProcesses, true), Answer(true));
  ExpectEveryRankAnswered(out, true);
  // A process that failed says so, with its exit code.
  EXPECT_TRUE(absl::StrContains(out[kFailingRank].status().message(), "process exited with 1"))
      << out[kFailingRank].status();
}

TEST(RunRanksTest, ProcessesReportARankThatDies) {
  RankFunction die = [](Rank& rank) -> absl::StatusOr<std::string> {
    if (rank.comm.rank() == 1) rank.die();
    return std::string("alive");
  };
  LaunchOptions launch = Launch(RanksOn::kProcesses, false);
  launch.child_args = {"run_ranks_test", "die"};
  const auto out = RunRanks(Mesh(), launch, die);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FALSE(out[1].ok());
  EXPECT_TRUE(absl::StrContains(out[1].status().message(), "process exited with 9"))
      << out[1].status();
}

// The child's side: argv is child_args + --rank R --store-dir DIR --job JOB.
int RunAsChild(int argc, char** argv) {
  ChildRank child;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--rank" && !absl::SimpleAtoi(value, &child.rank)) return 2;
    if (flag == "--store-dir") child.dir = value;
    if (flag == "--job") child.job = value;
  }
  const std::string kind = argv[1];
  LaunchOptions launch = Launch(RanksOn::kProcesses, kind == "fail");
  if (kind == "die") {
    return RunChildRank(Mesh(), child, launch, [](Rank& rank) -> absl::StatusOr<std::string> {
      if (rank.comm.rank() == 1) rank.die();
      return std::string("alive");
    });
  }
  return RunChildRank(Mesh(), child, launch, Answer(kind == "fail"));
}

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[2], "--rank") == 0) return reshard::RunAsChild(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
