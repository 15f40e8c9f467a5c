#include "tests/gpu/rank_by_rank.h"

#include <utility>

#include "collectives/executor.h"
#include "harness/ground_truth.h"
#include "tests/gpu/local_only_communicator.h"

namespace reshard {

bool NeedsNoCommunication(const Plan& plan, const DeviceMesh& mesh) {
  for (const TransformInfo& info : plan.steps) {
    if (mesh.GroupSize(info.step.group) > 1 && IsCommunicating(info.step.kind)) return false;
  }
  return true;
}

std::vector<PreparedCase> LocalOnlyCases(int count, int64_t max_ranks, uint64_t first_seed,
                                         int max_tries) {
  std::vector<PreparedCase> cases;
  for (int i = 0; i < max_tries && static_cast<int>(cases.size()) < count; ++i) {
    absl::StatusOr<PreparedCase> p = Prepare(RandomCase(first_seed + i, max_ranks));
    if (p.ok() && NeedsNoCommunication(p->plan, p->src.mesh())) cases.push_back(*std::move(p));
  }
  return cases;
}

absl::StatusOr<RankResult> RunRankOn(const PreparedCase& p, Communicator& comm,
                                     const Transfer& transfer) {
  absl::StatusOr<LocalTensor> shard =
      ShardOf(p.global, p.src, comm.coordinate(), p.spec_case.data_seed);
  if (!shard.ok()) return shard.status();
  absl::StatusOr<LocalTensor> t = transfer.to_engine(*shard);
  if (!t.ok()) return t.status();
  RankResult r;
  if (absl::Status s = Redistribute(*t, p.src, p.dst, p.plan, comm, &r.stats); !s.ok()) return s;
  absl::StatusOr<LocalTensor> host = transfer.to_host(*t);
  if (!host.ok()) return host.status();
  r.tensor = *std::move(host);
  return r;
}

CaseReport VerifyRankByRank(const PreparedCase& p, CopyEngine& engine, const Transfer& transfer) {
  std::vector<absl::StatusOr<RankResult>> results;
  for (int64_t rank = 0; rank < p.src.mesh().num_ranks(); ++rank) {
    LocalOnlyCommunicator comm(p.src.mesh(), rank, engine);
    results.push_back(RunRankOn(p, comm, transfer));
  }
  return Check(p, results);
}

}  // namespace reshard
