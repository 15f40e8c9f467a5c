#include "tests/util/executor_harness.h"

#include <utility>

#include "absl/time/time.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/gloo/thread_ranks.h"
#include "gtest/gtest.h"
#include "harness/ground_truth.h"
#include "mesh/device_mesh.h"
#include "planner/steps/logical_shape.h"
#include "planner/steps/step_bytes.h"

namespace reshard {

DistSpec Spec(const std::vector<int64_t>& mesh, const std::string& notation,
              const std::vector<int64_t>& shape, DType dtype) {
  absl::StatusOr<DistSpec> s = DistSpec::Parse(*DeviceMesh::Create(mesh), notation, shape, dtype);
  EXPECT_TRUE(s.ok()) << notation << ": " << s.status();
  return *s;
}

RunResult Execute(const DistSpec& src, const DistSpec& dst, const Plan& plan) {
  const DeviceMesh& mesh = src.mesh();
  const int64_t n = mesh.num_ranks();
  const LocalTensor global = *TestTensor(src.dtype(), src.global_shape(), kSeed, n);
  RunResult run;
  run.status.resize(n);
  run.result.resize(n);
  run.stats.resize(n);
  GlooOptions options;
  options.timeout = absl::Seconds(20);
  std::vector<absl::Status> connect = RunRanksOnThreads(mesh, options, [&](GlooCommunicator& c) {
    absl::StatusOr<LocalTensor> t = ShardOf(global, src, c.coordinate(), kSeed);
    if (!t.ok()) return t.status();
    run.result[c.rank()] = *std::move(t);
    run.status[c.rank()] =
        Redistribute(run.result[c.rank()], src, dst, plan, c, &run.stats[c.rank()]);
    return absl::OkStatus();
  });
  for (int64_t r = 0; r < n; ++r) EXPECT_TRUE(connect[r].ok()) << connect[r];
  return run;
}

void ExpectDstShards(const DistSpec& src, const DistSpec& dst, const RunResult& run) {
  const LocalTensor global =
      *TestTensor(src.dtype(), src.global_shape(), kSeed, src.mesh().num_ranks());
  for (int64_t r = 0; r < src.mesh().num_ranks(); ++r) {
    ASSERT_TRUE(run.status[r].ok()) << "rank " << r << ": " << run.status[r];
    absl::StatusOr<LocalTensor> want = ShardOf(global, dst, src.mesh().Coordinate(r), kSeed);
    ASSERT_TRUE(want.ok());
    absl::StatusOr<int64_t> bad = FirstMismatch(run.result[r], *want, 0);
    ASSERT_TRUE(bad.ok()) << "rank " << r << ": " << bad.status();
    EXPECT_EQ(*bad, -1) << "rank " << r << " differs at element " << *bad;
  }
}

void ExpectBytes(const RunResult& run, int64_t step, int64_t bytes) {
  for (size_t r = 0; r < run.stats.size(); ++r) {
    ASSERT_GT(run.stats[r].steps.size(), static_cast<size_t>(step));
    EXPECT_EQ(run.stats[r].steps[step].bytes_sent, bytes) << "rank " << r;
    EXPECT_EQ(run.stats[r].steps[step].bytes_received, bytes) << "rank " << r;
  }
}

void ExpectBytesOfStep(const DistSpec& src, const DistState& state, const Step& step, int64_t index,
                       const RunResult& run, DType dtype) {
  for (int64_t r = 0; r < src.mesh().num_ranks(); ++r) {
    ASSERT_GT(run.stats[r].steps.size(), static_cast<size_t>(index));
    const std::vector<int64_t> coord = src.mesh().Coordinate(r);
    const std::vector<int64_t> L = LogicalShape(state, step, src.mesh(), src.global_shape(), coord);
    const StepBytes want = BytesOfStep(state, step, L, src.mesh(), coord, dtype);
    EXPECT_EQ(run.stats[r].steps[index].bytes_sent, want.sent)
        << "rank " << r << ", step " << index;
    EXPECT_EQ(run.stats[r].steps[index].bytes_received, want.received)
        << "rank " << r << ", step " << index;
  }
}

}  // namespace reshard
