#include "harness/cross_mesh_runner.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "collectives/cross_mesh_communicators.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/in_process_store.h"
#include "collectives/tensor/host_math.h"
#include "harness/faulty_communicator.h"
#include "harness/ground_truth.h"
#include "harness/prepared_case.h"

namespace reshard {
namespace {

// A participant's connections; they stay open until every participant is
// done (a peer may still be reading what this one sent).
struct Connections {
  std::unique_ptr<GlooCommunicator> own_union, src_comm, dst_comm;
  GlooCommunicator* union_comm = nullptr;  // own_union, or a child rank's (run_ranks.h)
  std::function<void()> die;               // what a faulted participant does
};

// The connections this participant takes part in (CrossMeshMemberships:
// the source and destination meshes', and the union's when `with_union`),
// at once: each is collective over its own ranks, under prefix + "src",
// "dst", "union".
absl::Status Connect(const CrossMeshPlan& plan, int64_t index, std::shared_ptr<Store> store,
                     const GlooOptions& options, const std::string& prefix, bool with_union,
                     Connections& c) {
  RESHARD_ASSIGN_OR_RETURN(std::vector<CrossMeshMembership> members,
                           CrossMeshMemberships(plan, plan.participants[index]));
  if (!with_union) {
    members.erase(std::remove_if(
                      members.begin(), members.end(),
                      [](const CrossMeshMembership& m) { return m.role == CrossMeshRole::kUnion; }),
                  members.end());
  }
  const std::vector<absl::Status> status =
      RunTogetherOnThreads(static_cast<int64_t>(members.size()), [&](int64_t k) {
        const CrossMeshMembership& m = members[k];
        std::unique_ptr<GlooCommunicator>* out = m.role == CrossMeshRole::kUnion    ? &c.own_union
                                                 : m.role == CrossMeshRole::kSource ? &c.src_comm
                                                                                    : &c.dst_comm;
        GlooOptions o = options;
        o.prefix = absl::StrCat(prefix, CrossMeshRoleName(m.role));
        absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
            GlooCommunicator::Connect(m.mesh, m.rank, store, o);
        if (comm.ok()) *out = *std::move(comm);
        return comm.status();
      });
  if (c.own_union != nullptr) c.union_comm = c.own_union.get();
  for (const absl::Status& s : status) RESHARD_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

// What a body sees of a participant's connections.
ParticipantComms CommsOf(Connections& c) {
  return ParticipantComms{c.src_comm.get(), c.dst_comm.get(), c.union_comm, c.die};
}

// One connected participant: its source shard, run.
absl::Status RunParticipant(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                            const LocalTensor& global, uint64_t seed, int64_t index,
                            const Fault& fault, const ParticipantComms& c, ParticipantResult& out) {
  const int64_t rank = plan.participants[index];
  out.tensor = *LocalTensor::Zeros(r.src.dtype(), {0});
  if (const int64_t s = plan.SrcIndex(rank); s >= 0) {
    RESHARD_ASSIGN_OR_RETURN(out.tensor, ShardOf(global, r.src, r.src.mesh().Coordinate(s), seed));
  }
  Communicator* union_comm = c.union_comm;
  std::unique_ptr<FaultyCommunicator> faulty;
  if (rank == fault.rank) {
    faulty = std::make_unique<FaultyCommunicator>(*c.union_comm, fault.at_call, c.die);
    union_comm = faulty.get();
  }
  return RedistributeAcross(out.tensor, r, plan, rank, c.src, c.dst, *union_comm, &out.stats);
}

// A child participant's result as bytes: "<sent> <received>\n<tensor bytes>".
std::string EncodeResult(const ParticipantResult& p) {
  return absl::StrCat(p.stats.bytes_sent, " ", p.stats.bytes_received, "\n",
                      absl::string_view(static_cast<const char*>(p.tensor.data()),
                                        static_cast<size_t>(p.tensor.nbytes())));
}

// Participant `index`'s result back: a destination rank's tensor has its
// dst block's shape, any other an empty one. DataLoss for malformed bytes.
ParticipantResult DecodeResult(absl::string_view bytes, const CrossMeshRequest& r,
                               const CrossMeshPlan& plan, int64_t index) {
  ParticipantResult p;
  const int64_t d = plan.DstIndex(plan.participants[index]);
  const std::vector<int64_t> shape =
      d < 0 ? std::vector<int64_t>{0} : r.dst.LocalShape(r.dst.mesh().Coordinate(d));
  const size_t newline = bytes.find('\n');
  std::vector<std::string> counts =
      absl::StrSplit(bytes.substr(0, std::min(newline, bytes.size())), ' ');
  absl::StatusOr<LocalTensor> t = LocalTensor::Zeros(r.dst.dtype(), shape);
  if (newline == absl::string_view::npos || counts.size() != 2 ||
      !absl::SimpleAtoi(counts[0], &p.stats.bytes_sent) ||
      !absl::SimpleAtoi(counts[1], &p.stats.bytes_received) || !t.ok() ||
      bytes.size() - newline - 1 != static_cast<size_t>(t->nbytes())) {
    p.status = absl::DataLossError("malformed result from its process");
    return p;
  }
  if (t->nbytes() > 0) std::memcpy(t->data(), bytes.data() + newline + 1, t->nbytes());
  p.tensor = *std::move(t);
  p.status = absl::OkStatus();
  return p;
}

// Every participant a child process (run_ranks.h), results decoded.
std::vector<ParticipantResult> RunAcrossInProcesses(const CrossMeshRequest& r,
                                                    const CrossMeshPlan& plan,
                                                    const LaunchOptions& launch) {
  const int64_t n = static_cast<int64_t>(plan.participants.size());
  const std::vector<absl::StatusOr<std::string>> outputs = RunRanks(
      *DeviceMesh::Create({n}), launch,
      [](Rank&) -> absl::StatusOr<std::string> { return absl::InternalError("not a child"); });
  std::vector<ParticipantResult> results(n);
  for (int64_t i = 0; i < n; ++i) {
    if (outputs[i].ok()) {
      results[i] = DecodeResult(*outputs[i], r, plan, i);
    } else {
      results[i].status = outputs[i].status();
    }
  }
  return results;
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
    const LocalTensor& got = results[plan.ParticipantIndex(rank)].tensor;
    // A view for Reassemble, which only reads it.
    shards.push_back(
        LocalTensor::View(const_cast<void*>(got.data()), got.dtype(), got.shape(), got.space()));
    if (r.dst.has_partial()) continue;
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
  if (!r.dst.has_partial()) return "";
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

// Every participant's crossing counters against what its plan says; "" when
// they match.
std::string CheckCounters(const CrossMeshPlan& plan, const std::vector<ParticipantResult>& results,
                          const std::vector<int64_t>& sent, const std::vector<int64_t>& bound) {
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
                    uint64_t seed, const std::vector<ParticipantResult>& results,
                    const std::vector<int64_t>& sent, const std::vector<int64_t>& received) {
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
  return CheckCounters(plan, results, sent, received);
}

}  // namespace

std::vector<absl::Status> OnParticipantThreads(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                                               const GlooOptions& options,
                                               const ParticipantBody& body) {
  const std::shared_ptr<Store> store = NewInProcessStore();
  const size_t n = plan.participants.size();
  std::vector<Connections> connections(n);
  // Every participant closes its connections once all are done (a peer may
  // still be reading what it sent), all at once: closing takes a while.
  absl::Mutex mu;
  size_t running = n;
  return RunTogetherOnThreads(static_cast<int64_t>(n), [&](int64_t index) {
    Connections& c = connections[index];
    c.die = [&c] {
      for (auto* comm : {c.own_union.get(), c.src_comm.get(), c.dst_comm.get()}) {
        if (comm != nullptr) comm->Abort();
      }
    };
    absl::Status status = Connect(plan, index, store, options, "", true, c);
    if (status.ok()) status = body(index, CommsOf(c));
    {
      absl::MutexLock lock(&mu);
      --running;
      mu.Await(absl::Condition(
          +[](size_t* k) { return *k == 0; }, &running));
    }
    c = Connections();
    return status;
  });
}

std::vector<ParticipantResult> RunAcrossOnThreads(const CrossMeshRequest& r,
                                                  const CrossMeshPlan& plan,
                                                  const LocalTensor& global, uint64_t seed,
                                                  const GlooOptions& options, const Fault& fault) {
  std::vector<ParticipantResult> results(plan.participants.size());
  const std::vector<absl::Status> status =
      OnParticipantThreads(r, plan, options, [&](int64_t index, const ParticipantComms& c) {
        return RunParticipant(r, plan, global, seed, index, fault, c, results[index]);
      });
  for (size_t i = 0; i < results.size(); ++i) results[i].status = status[i];
  return results;
}

CaseReport CheckAcross(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                       const LocalTensor& global, uint64_t seed,
                       const std::vector<ParticipantResult>& results) {
  return CheckAcross(r, plan, global, seed, results, plan.BytesSent(), plan.BytesReceived());
}

CaseReport CheckAcross(const CrossMeshRequest& r, const CrossMeshPlan& plan,
                       const LocalTensor& global, uint64_t seed,
                       const std::vector<ParticipantResult>& results,
                       const std::vector<int64_t>& sent, const std::vector<int64_t>& received) {
  CaseReport report;
  if (std::string problem = Problem(r, plan, global, seed, results, sent, received);
      !problem.empty()) {
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
  RESHARD_RETURN_IF_ERROR(CheckPartialsReducible(r.src, r.dst, "dtype"));
  PlanOptions options{c.mode};
  options.cost_model = c.cost_model;
  if (c.max_memory > 0) options.max_memory = c.max_memory;
  RESHARD_ASSIGN_OR_RETURN(CrossMeshPlan plan, PlanCrossMesh(r, options));
  RESHARD_RETURN_IF_ERROR(CheckRunnable(plan.before, r.src.mesh(), c.dtype));
  RESHARD_RETURN_IF_ERROR(CheckRunnable(plan.after, r.dst.mesh(), c.dtype));
  return plan;
}

namespace {

// A case parsed, planned and with its global tensor.
struct PreparedAcross {
  CrossMeshRequest request;
  CrossMeshPlan plan;
  LocalTensor global;
};

absl::StatusOr<PreparedAcross> PrepareAcross(const CrossMeshCase& c) {
  RESHARD_ASSIGN_OR_RETURN(CrossMeshRequest r, RequestOf(c));
  RESHARD_ASSIGN_OR_RETURN(CrossMeshPlan plan, PlanCrossMeshCase(c));
  const int64_t ranks = std::max(r.src.mesh().num_ranks(), r.dst.mesh().num_ranks());
  RESHARD_ASSIGN_OR_RETURN(LocalTensor global, TestTensor(c.dtype, c.shape, c.data_seed, ranks));
  return PreparedAcross{std::move(r), std::move(plan), std::move(global)};
}

}  // namespace

CrossMeshReport VerifyCrossMesh(const CrossMeshCase& c, const LaunchOptions& launch,
                                const Fault& fault) {
  CrossMeshReport out;
  absl::StatusOr<PreparedAcross> p = PrepareAcross(c);
  if (!p.ok()) {
    out.report = NotRun(p.status());
    return out;
  }
  const std::vector<ParticipantResult> results =
      launch.on == RanksOn::kThreads
          ? RunAcrossOnThreads(p->request, p->plan, p->global, c.data_seed, launch.gloo, fault)
          : RunAcrossInProcesses(p->request, p->plan, launch);
  out.report = CheckAcross(p->request, p->plan, p->global, c.data_seed, results);
  out.rank_sets = RankSetsOf(p->plan);
  out.remesh = out.rank_sets == RankSets::kEqual && c.mesh != c.dst_mesh;
  out.participants = static_cast<int64_t>(p->plan.participants.size());
  out.slices = static_cast<int64_t>(p->plan.routes.size());
  out.rounds = p->plan.rounds;
  out.relayed = p->plan.Relayed();
  out.staged = p->plan.Staged();
  for (int64_t b : p->plan.BytesSent()) out.bytes_sent += b;
  return out;
}

CrossMeshReport VerifyCrossMeshOnThreads(const CrossMeshCase& c, const GlooOptions& options,
                                         const Fault& fault) {
  LaunchOptions launch;
  launch.gloo = options;
  return VerifyCrossMesh(c, launch, fault);
}

int RunCrossMeshChild(const CrossMeshCase& c, const ChildRank& child, const LaunchOptions& launch,
                      const Fault& fault) {
  absl::StatusOr<PreparedAcross> p = PrepareAcross(c);
  if (!p.ok()) return FailChildRank(child, p.status());
  // The meshes' communicators meet where the union's does (RunChildRank):
  // the hosts' store, or this host's file store.
  absl::StatusOr<std::shared_ptr<Store>> store = OpenRankStore(launch, child.dir);
  if (!store.ok()) return FailChildRank(child, store.status());
  Connections conns;  // open until RunChildRank has waited for every participant
  const int64_t n = static_cast<int64_t>(p->plan.participants.size());
  return RunChildRank(
      *DeviceMesh::Create({n}), child, launch, [&](Rank& rank) -> absl::StatusOr<std::string> {
        conns.union_comm = &rank.comm;
        conns.die = rank.die;
        const int64_t index = rank.comm.rank();
        RESHARD_RETURN_IF_ERROR(Connect(p->plan, index, *store, launch.gloo,
                                        absl::StrCat(child.job, "/"), false, conns));
        ParticipantResult out;
        RESHARD_RETURN_IF_ERROR(RunParticipant(p->request, p->plan, p->global, c.data_seed, index,
                                               fault, CommsOf(conns), out));
        return EncodeResult(out);
      });
}

}  // namespace reshard
