// Verify cases (harness/verify_runner.h) run rank by rank on one copy engine:
// how tests/gpu checks Redistribute on device memory against the ground truth
// with a single GPU. Only plans that need no communication qualify (steps on
// mesh dims of size > 1 all local: chunk, partition); every rank of the mesh
// runs in turn through a LocalOnlyCommunicator.
//
//   std::vector<PreparedCase> cases = LocalOnlyCases(/*count=*/40,
//   /*max_ranks=*/8,
//                                                    /*first_seed=*/1,
//                                                    /*max_tries=*/20000);
//   CaseReport r = VerifyRankByRank(cases[0], engine, transfer);
#ifndef RESHARD_TESTS_GPU_RANK_BY_RANK_H_
#define RESHARD_TESTS_GPU_RANK_BY_RANK_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/verify_runner.h"
#include "mesh/device_mesh.h"
#include "planner/steps/plan.h"

namespace reshard {

// True when every step of `plan` on a mesh dim of size > 1 is local.
bool NeedsNoCommunication(const Plan& plan, const DeviceMesh& mesh);

// The first `count` cases RandomCase(seed, max_ranks) gives for seeds
// first_seed, first_seed + 1, ... (at most max_tries seeds) that Prepare
// succeeds on and that need no communication; fewer if the seeds run out.
std::vector<PreparedCase> LocalOnlyCases(int count, int64_t max_ranks, uint64_t first_seed,
                                         int max_tries);

// Moves a host tensor into a copy engine's memory space and back.
struct Transfer {
  std::function<absl::StatusOr<LocalTensor>(const LocalTensor& host)> to_engine;
  std::function<absl::StatusOr<LocalTensor>(const LocalTensor& t)> to_host;
};

// One rank's part of p on `comm` (whose memory space `transfer` serves): its
// source shard (shard_util.h) moved there, Redistribute, the result moved
// back to the host.
absl::StatusOr<RankResult> RunRankOn(const PreparedCase& p, Communicator& comm,
                                     const Transfer& transfer);

// For every rank of p's mesh in turn: its source shard (shard_util.h) moved
// to the engine, Redistribute through a LocalOnlyCommunicator, the result
// moved back; then verify.h's Check of all of them.
CaseReport VerifyRankByRank(const PreparedCase& p, CopyEngine& engine, const Transfer& transfer);

}  // namespace reshard

#endif  // RESHARD_TESTS_GPU_RANK_BY_RANK_H_
