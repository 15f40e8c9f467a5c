#include "harness/cross_mesh_runner.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "collectives/stores/in_process_store.h"
#include "collectives/tensor/host_math.h"
#include "harness/faulty_communicator.h"
#include "harness/ground_truth.h"

namespace reshard {
namespace {

int64_t IndexOf(const std::vector<int64_t>& ranks, int64_t rank) {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  return it == ranks.end() ? -1 : it - ranks.begin();
}

bool HasPartial(const DistSpec& spec) {
  for (const Placement& p : spec.state().placements()) {
    if (p.is_partial()) return true;
  }
  return false;
}

// A participant's connections; they stay open until every participant is
// done (a peer may still be reading what this one sent).
struct Connections {
  std::unique_ptr<GlooCommunicator> union_comm, src_comm, dst_comm;
  void Abort() {
    for (auto* c : {union_comm.get(), src_comm.get(), dst_comm.get()}) {
      if (c != nullptr) c->Abort();
    }
  }
};

// The union, source and destination connections, at once (each is
// collective over its own ranks, under its own prefix).
absl::Status Connect(const CrossMeshRequest& r, const CrossMeshPlan& plan, int64_t index,
                     std::shared_ptr<Store> store, const GlooOptions& options, Connections& c) {
  const int64_t rank = plan.participants[index];
  const int64_t n = static_cast<int64_t>(plan.participants.size());
  auto connect = [&](const DeviceMesh& mesh, int64_t mesh_rank, const char* prefix,
                     std::unique_ptr<GlooCommunicator>& out, absl::Status& status) {
    GlooOptions o = options;
    o.prefix = prefix;
    absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
        GlooCommunicator::Connect(mesh, mesh_rank, store, o);
    if (comm.ok()) out = *std::move(comm);
    status = comm.status();
  };
  std::array<absl::Status, 3> status;
  std::vector<std::thread> threads;
  if (const int64_t s = IndexOf(plan.src_ranks, rank); s >= 0) {
    threads.emplace_back([&, s] { connect(r.src.mesh(), s, "src", c.src_comm, status[1]); });
  }
  if (const int64_t d = IndexOf(plan.dst_ranks, rank); d >= 0) {
    threads.emplace_back([&, d] { connect(r.dst.mesh(), d, "dst", c.dst_comm, status[2]); });
  }
  connect(*DeviceMesh::Create({n}), index, "union", c.union_comm, status[0]);
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) RESHARD_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

// One participant: connect what it takes part in, its source shard, run.
absl::Status RunParticipant(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                            const LocalTensor& global, uint64_t seed, int64_t index,
                            const std::shared_ptr<Store>& store, const GlooOptions& options,
                            const Fault& fault, Connections& c, ParticipantResult& out) {
  RESHARD_RETURN_IF_ERROR(Connect(r, plan, index, store, options, c));
  const int64_t rank = plan.participants[index];
  out.tensor = *LocalTensor::Zeros(r.src.dtype(), {0});
  if (const int64_t s = IndexOf(plan.src_ranks, rank); s >= 0) {
    RESHARD_ASSIGN_OR_RETURN(out.tensor, ShardOf(global, r.src, r.src.mesh().Coordinate(s), seed));
  }
  Communicator* union_comm = c.union_comm.get();
  std::unique_ptr<FaultyCommunicator> faulty;
  if (rank == fault.rank) {
    faulty =
        std::make_unique<FaultyCommunicator>(*c.union_comm, fault.at_call, [&c] { c.Abort(); });
    union_comm = faulty.get();
  }
  return RedistributeAcross(out.tensor, r, plan, rank, c.src_comm.get(), c.dst_comm.get(),
                            *union_comm, &out.stats);
}

// The destination ranks' results against the ground truth; "" when they match.
std::string CheckData(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                      const LocalTensor& global, uint64_t seed,
                      const std::vector<ParticipantResult>& results) {
  const bool reduced = HasReduction(plan.before) || HasReduction(plan.after);
  const double tolerance = reduced ? ReductionTolerance(r.dst.dtype(), 64) : 0;
  std::vector<LocalTensor> shards;  // in the destination mesh's rank order
  for (size_t d = 0; d < plan.dst_ranks.size(); ++d) {
    const int64_t rank = plan.dst_ranks[d];
    const LocalTensor& got = results[IndexOf(plan.participants, rank)].tensor;
    // A view for Reassemble, which only reads it.
    shards.push_back(
        LocalTensor::View(const_cast<void*>(got.data()), got.dtype(), got.shape(), got.space()));
    if (HasPartial(r.dst)) continue;
    const std::vector<int64_t> coord = r.dst.mesh().Coordinate(static_cast<int64_t>(d));
    absl::StatusOr<LocalTensor> want = ShardOf(global, r.dst, coord, seed);
    if (!want.ok()) return std::string(want.status().message());
    absl::StatusOr<int64_t> bad = FirstMismatch(got, *want, tolerance);
    if (!bad.ok()) return absl::StrCat("rank ", rank, ": ", bad.status().message());
    if (*bad >= 0) {
      return absl::StrFormat("rank %d: element %d of its shard is %g, expected %g", rank, *bad,
                             LoadAsDouble(got.data(), *bad, got.dtype()),
                             LoadAsDouble(want->data(), *bad, want->dtype()));
    }
  }
  if (!HasPartial(r.dst)) return "";
  absl::StatusOr<LocalTensor> back = Reassemble(shards, r.dst);
  if (!back.ok()) return std::string(back.status().message());
  absl::StatusOr<int64_t> bad = FirstMismatch(*back, global, tolerance);
  if (!bad.ok()) return std::string(bad.status().message());
  if (*bad < 0) return "";
  return absl::StrFormat(
      "the destination ranks' results reduce to %g at global element %d, "
      "expected %g",
      LoadAsDouble(back->data(), *bad, back->dtype()), *bad,
      LoadAsDouble(global.data(), *bad, global.dtype()));
}

// Every participant's crossing counters against the plan; "" when they match.
std::string CheckCounters(const CrossMeshPlan& plan,
                          const std::vector<ParticipantResult>& results) {
  const std::vector<int64_t> sent = plan.BytesSent();
  const std::vector<int64_t> bound = plan.ReceiveLowerBoundBytes();
  for (size_t i = 0; i < results.size(); ++i) {
    const CrossingStats& s = results[i].stats;
    if (s.bytes_sent != sent[i] || s.bytes_received != bound[i]) {
      return absl::StrFormat(
          "rank %d: the crossing sent/received %d/%d bytes, the plan says %d/%d (its receive "
          "lower bound)",
          plan.participants[i], s.bytes_sent, s.bytes_received, sent[i], bound[i]);
    }
  }
  return "";
}

std::string Problem(const CrossMeshRequest& r, const CrossMeshPlan& plan, const LocalTensor& global,
                    uint64_t seed, const std::vector<ParticipantResult>& results) {
  if (results.size() != plan.participants.size()) {
    return absl::StrFormat("%d results for %d participants", results.size(),
                           plan.participants.size());
  }
  std::string errors;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].status.ok()) {
      absl::StrAppend(&errors, "\n      rank ", plan.participants[i], ": ",
                      results[i].status.ToString());
    }
  }
  if (!errors.empty()) return absl::StrCat("ranks failed:", errors);
  if (std::string p = CheckData(r, plan, global, seed, results); !p.empty()) return p;
  return CheckCounters(plan, results);
}

}  // namespace

std::vector<ParticipantResult> RunAcrossOnThreads(const CrossMeshRequest& r,
                                                  const CrossMeshPlan& plan,
                                                  const LocalTensor& global, uint64_t seed,
                                                  const GlooOptions& options, const Fault& fault) {
  const std::shared_ptr<Store> store = NewInProcessStore();
  const size_t n = plan.participants.size();
  std::vector<ParticipantResult> results(n);
  std::vector<Connections> connections(n);
  std::vector<std::thread> threads;
  // Every participant closes its connections once all are done (a peer may
  // still be reading what it sent), all at once: closing takes a while.
  absl::Mutex mu;
  size_t running = n;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      results[i].status = RunParticipant(r, plan, global, seed, static_cast<int64_t>(i), store,
                                         options, fault, connections[i], results[i]);
      {
        absl::MutexLock lock(&mu);
        --running;
        mu.Await(absl::Condition(
            +[](size_t* k) { return *k == 0; }, &running));
      }
      connections[i] = Connections();
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

CaseReport CheckAcross(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                       const LocalTensor& global, uint64_t seed,
                       const std::vector<ParticipantResult>& results) {
  CaseReport report;
  if (std::string problem = Problem(r, plan, global, seed, results); !problem.empty()) {
    report.outcome = Outcome::kFailed;
    report.detail = absl::StrCat("plan ", plan.Summary(), ": ", std::move(problem));
    return report;
  }
  for (const Plan* part : {&plan.before, &plan.after}) {
    for (const TransformInfo& info : part->steps) {
      ++report.steps_by_kind[static_cast<int>(info.step.kind)];
      report.group_steps_by_kind[static_cast<int>(info.step.kind)] += info.step.group.size() > 1;
    }
  }
  return report;
}

absl::StatusOr<CrossMeshPlan> PlanCrossMeshCase(const CrossMeshCase& c) {
  RESHARD_ASSIGN_OR_RETURN(CrossMeshRequest r, RequestOf(c));
  if (c.dtype == DType::kBool && (HasPartial(r.src) || HasPartial(r.dst))) {
    return absl::InvalidArgumentError(
        "dtype bool: Partial placements (pending reductions) are not defined on bool data; "
        "use u8 or i32");
  }
  RESHARD_ASSIGN_OR_RETURN(CrossMeshPlan plan, PlanCrossMesh(r, PlanOptions{c.mode}));
  RESHARD_RETURN_IF_ERROR(CheckRunnable(plan.before, c.dtype));
  RESHARD_RETURN_IF_ERROR(CheckRunnable(plan.after, c.dtype));
  return plan;
}

CrossMeshReport VerifyCrossMeshOnThreads(const CrossMeshCase& c, const GlooOptions& options,
                                         const Fault& fault) {
  CrossMeshReport out;
  absl::StatusOr<CrossMeshRequest> r = RequestOf(c);
  absl::StatusOr<CrossMeshPlan> plan = r.ok() ? PlanCrossMeshCase(c) : r.status();
  if (!plan.ok()) {
    out.report = NotRun(plan.status());
    return out;
  }
  const int64_t ranks = std::max(r->src.mesh().num_ranks(), r->dst.mesh().num_ranks());
  absl::StatusOr<LocalTensor> global = TestTensor(c.dtype, c.shape, c.data_seed, ranks);
  if (!global.ok()) {
    out.report = NotRun(global.status());
    return out;
  }
  const std::vector<ParticipantResult> results =
      RunAcrossOnThreads(*r, *plan, *global, c.data_seed, options, fault);
  out.report = CheckAcross(*r, *plan, *global, c.data_seed, results);
  out.rank_sets = RankSetsOf(*plan);
  out.remesh = out.rank_sets == RankSets::kEqual && c.mesh != c.dst_mesh;
  out.participants = static_cast<int64_t>(plan->participants.size());
  out.slices = static_cast<int64_t>(plan->routes.size());
  for (int64_t b : plan->BytesSent()) out.bytes_sent += b;
  return out;
}

}  // namespace reshard
