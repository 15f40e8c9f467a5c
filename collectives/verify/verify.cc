#include "collectives/verify/verify.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/tensor/host_math.h"
#include "collectives/verify/faulty_communicator.h"
#include "collectives/verify/shard_util.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/notation.h"
#include "planner/planner.h"
#include "planner/steps/step_bytes.h"

namespace reshard {

std::string VerifyCase::Flags() const {
  return absl::StrFormat(
      "--mesh %s --shape %s --dtype %s --src '%s' --dst '%s' --algorithm %s --mode %s --seed %d",
      absl::StrJoin(mesh, ","), absl::StrJoin(shape, ","), DTypeName(dtype), src, dst,
      AlgorithmName(algorithm), PlanModeName(mode), data_seed);
}

std::string VerifyCase::CommandLine() const { return absl::StrCat("reshard verify ", Flags()); }

namespace {

constexpr DType kDTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                             DType::kI32, DType::kI16, DType::kI8,  DType::kU8};

// One random placement per mesh dim and random orders where a tensor dim is
// sharded more than once.
// `shards` of 8 placements are Shard, the rest Replicate or Partial.
DistState RandomState(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim,
                      const std::vector<ReduceOp>& ops, int shards = 4) {
  std::vector<Placement> placements;
  for (int m = 0; m < mesh_ndim; ++m) {
    const int kind = static_cast<int>(rng() % 8);
    if (kind < shards) {
      placements.push_back(Placement::Shard(static_cast<int>(rng() % tensor_ndim)));
    } else if (kind < shards + (8 - shards) / 2) {
      placements.push_back(Placement::Replicate());
    } else {
      placements.push_back(Placement::Partial(ops[rng() % ops.size()]));
    }
  }
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    ShardOrderEntry e{d, {}};
    for (int m = 0; m < mesh_ndim; ++m) {
      if (placements[m].is_shard() && placements[m].dim() == d) e.mesh_dims.push_back(m);
    }
    if (e.mesh_dims.empty()) continue;
    if (rng() % 2 == 0) std::shuffle(e.mesh_dims.begin(), e.mesh_dims.end(), rng);
    order.push_back(std::move(e));
  }
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  return s.ok() ? *s : DistState::WithDefaultOrder(placements);
}

// `state` with its Shard mesh dims rearranged, as a permute does: each
// tensor dim's order reversed, or (for tensors of 2+ dims) tensor dims 0 and
// 1 swapped. Partial and Replicate mesh dims stay.
DistState Rearranged(std::mt19937_64& rng, const DistState& state, int tensor_ndim) {
  const bool swap = tensor_ndim > 1 && rng() % 2 == 0;
  std::vector<Placement> placements = state.placements();
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    const int from = swap && d < 2 ? 1 - d : d;
    MeshDimList dims = state.OrderOf(from);
    if (dims.empty()) continue;
    if (!swap) std::reverse(dims.begin(), dims.end());
    for (int m : dims) placements[m] = Placement::Shard(d);
    order.push_back(ShardOrderEntry{d, std::vector<int>(dims.begin(), dims.end())});
  }
  absl::StatusOr<DistState> s = DistState::Create(placements, order);
  return s.ok() ? *s : state;
}

// `state` with the mesh dims that shard its first sharded tensor dim, and
// every Partial one, all turned into one random placement (Replicate or a
// Shard): what one collective over several mesh dims does.
DistState Collapsed(std::mt19937_64& rng, const DistState& state, int tensor_ndim) {
  const Placement to = rng() % 3 == 0 ? Placement::Replicate()
                                      : Placement::Shard(static_cast<int>(rng() % tensor_ndim));
  int first = -1;
  std::vector<Placement> placements = state.placements();
  for (Placement& q : placements) {
    if (q.is_shard() && first == -1) first = q.dim();
    if (q.is_partial() || (q.is_shard() && q.dim() == first)) q = to;
  }
  return DistState::WithDefaultOrder(placements);
}

// Src and dst of a native case: mostly Shard layouts, dst a third of the
// time src rearranged (permutes), a third collapsed (group collectives).
void NativeLayouts(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim,
                   const std::vector<ReduceOp>& ops, VerifyCase& c) {
  const int kind = static_cast<int>(rng() % 3);
  const DistState src = RandomState(rng, mesh_ndim, tensor_ndim, ops, kind == 1 ? 4 : 6);
  const DistState dst = kind == 0   ? Rearranged(rng, src, tensor_ndim)
                        : kind == 1 ? Collapsed(rng, src, tensor_ndim)
                                    : RandomState(rng, mesh_ndim, tensor_ndim, ops, 6);
  c.src = src.ToString();
  c.dst = dst.ToString();
}

}  // namespace

VerifyCase RandomCase(uint64_t seed, int64_t max_ranks, PlanMode mode) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  VerifyCase c;
  max_ranks = std::max<int64_t>(1, max_ranks);
  const int mesh_ndim = 1 + static_cast<int>(rng() % 4);
  int64_t ranks = 1;
  for (int m = 0; m < mesh_ndim; ++m) {
    // Sizes 1..4, size 1 less often; shrink to stay within max_ranks.
    static constexpr int64_t kSizes[] = {1, 2, 2, 2, 3, 3, 4, 4};
    int64_t size = kSizes[rng() % 8];
    while (size > 1 && ranks * size > max_ranks) --size;
    ranks *= size;
    c.mesh.push_back(size);
  }
  const int tensor_ndim = 1 + static_cast<int>(rng() % 4);
  static constexpr int64_t kExtents[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16};
  for (int d = 0; d < tensor_ndim; ++d) {
    int64_t e = kExtents[rng() % 12];
    if (tensor_ndim == 4) e = std::min<int64_t>(e, 6);
    c.shape.push_back(e);
  }
  c.dtype = kDTypes[rng() % 9];
  static const std::vector<std::vector<ReduceOp>> kOpSets = {
      {ReduceOp::kSum}, {ReduceOp::kAvg}, {ReduceOp::kMax}, {ReduceOp::kMin},
      {ReduceOp::kProd}, {ReduceOp::kSum, ReduceOp::kAvg}};
  const std::vector<ReduceOp>& ops = kOpSets[rng() % kOpSets.size()];
  static constexpr Algorithm kAlgorithms[] = {Algorithm::kGraph, Algorithm::kGraph,
                                              Algorithm::kGreedy, Algorithm::kGreedy,
                                              Algorithm::kAuto};
  c.mode = mode;
  if (mode == PlanMode::kNative) {
    NativeLayouts(rng, mesh_ndim, tensor_ndim, ops, c);
    c.algorithm = rng() % 2 == 0 ? Algorithm::kGraph : Algorithm::kAuto;  // never greedy
  } else {
    c.src = RandomState(rng, mesh_ndim, tensor_ndim, ops).ToString();
    c.dst = RandomState(rng, mesh_ndim, tensor_ndim, ops).ToString();
    c.algorithm = kAlgorithms[rng() % 5];
  }
  c.data_seed = rng() % 1000000;
  return c;
}

namespace {

// A case parsed and planned, before any data exists.
struct PlannedCase {
  DistSpec src;
  DistSpec dst;
  PlanOptions options{PlanMode::kPyTorch};
  Plan plan;
};

bool HasPartial(const DistSpec& spec) {
  for (const Placement& q : spec.state().placements()) {
    if (q.is_partial()) return true;
  }
  return false;
}

absl::StatusOr<PlannedCase> PlanCase(const VerifyCase& c) {
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create(c.mesh));
  RESHARD_ASSIGN_OR_RETURN(DistSpec src, DistSpec::Parse(mesh, c.src, c.shape, c.dtype));
  RESHARD_ASSIGN_OR_RETURN(DistSpec dst, DistSpec::Parse(mesh, c.dst, c.shape, c.dtype));
  if (c.dtype == DType::kBool && (HasPartial(src) || HasPartial(dst))) {
    return absl::InvalidArgumentError(
        "dtype bool: Partial placements (pending reductions) are not defined on bool data; "
        "use u8 or i32");
  }
  PlanOptions options{c.mode};  // native: the native default cost model
  options.algorithm = c.algorithm;
  options.coordinate.assign(mesh.ndim(), 0);
  RESHARD_ASSIGN_OR_RETURN(Plan plan, PlanRedistribution(src, dst, options));
  for (const TransformInfo& info : plan.steps) {
    if (c.dtype == DType::kBool && info.step.dst.is_partial()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dtype bool: the plan ", plan.Trace(),
          " goes through a Partial, which bool data cannot reduce; use u8 or i32"));
    }
    if (info.step.kind == StepKind::kPartition && info.step.dst.op() == ReduceOp::kProd) {
      return absl::UnimplementedError(
          absl::StrCat("the plan ", plan.Trace(), " needs R->P(prod), which has no exact split"));
    }
  }
  return PlannedCase{std::move(src), std::move(dst), std::move(options), std::move(plan)};
}

std::string GiB(double bytes) { return absl::StrFormat("%.3g GiB", bytes / (1 << 30)); }

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t e : shape) n *= static_cast<double>(e);
  return n;
}

}  // namespace

double EstimatedBytes(const DistSpec& src, const DistSpec& dst, const Plan& plan) {
  const DeviceMesh& mesh = src.mesh();
  const std::vector<int64_t> origin(mesh.ndim(), 0);
  const double dst_local = Elements(dst.LocalShape(origin));
  double peak = std::max(Elements(src.LocalShape(origin)), dst_local);
  for (const TransformInfo& info : plan.steps) {
    // The largest buffer of the step (spec §11): the whole padded logical
    // tensor, except for all_to_all, whose buffers hold 1/n of it.
    std::vector<int64_t> padded = info.logical_shape;
    const int64_t n = mesh.GroupSize(info.step.group);
    for (Placement q : {info.step.src, info.step.dst}) {
      if (q.is_shard()) padded[q.dim()] = n * PaddedChunkSize(padded[q.dim()], n);
    }
    const bool exchange = info.step.kind == StepKind::kAllToAll;
    peak = std::max(peak, Elements(padded) / (exchange ? static_cast<double>(n) : 1.0));
  }
  const double global = Elements(src.global_shape());
  const double ranks = static_cast<double>(mesh.num_ranks());
  const double item = ItemSize(src.dtype());
  double bytes = item * (global + ranks * 3 * peak + dst_local);
  // Reassemble: the ranks' values and the global result in doubles, plus bookkeeping.
  if (HasPartial(dst)) bytes += 8 * ranks * dst_local + (item + 16) * global;
  return bytes;
}

int64_t CollectiveCalls(const Plan& plan, const DeviceMesh& mesh) {
  int64_t calls = 0;
  for (const TransformInfo& info : plan.steps) {
    calls += IsCommunicating(info.step.kind) && mesh.GroupSize(info.step.group) > 1;
  }
  return calls;
}

absl::Status CheckCase(const VerifyCase& c, const VerifyLimits& limits, const Fault& fault) {
  RESHARD_ASSIGN_OR_RETURN(PlannedCase p, PlanCase(c));
  const DeviceMesh& mesh = p.src.mesh();
  if (mesh.num_ranks() > limits.max_ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--mesh %s has %d ranks, more than verify runs on one host (%d, --max-ranks; every "
        "rank is a thread or process with sockets to its peers)",
        absl::StrJoin(c.mesh, ","), mesh.num_ranks(), limits.max_ranks));
  }
  const double bytes = EstimatedBytes(p.src, p.dst, p.plan);
  if (bytes > limits.max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the case needs about %s of host memory (the tensor is %s; every rank's shards and "
        "buffers come on top), more than the limit of %s (--max-memory); use a smaller "
        "--shape or raise --max-memory",
        GiB(bytes), GiB(Elements(c.shape) * ItemSize(c.dtype)), GiB(limits.max_bytes)));
  }
  if (fault.rank == -1) return absl::OkStatus();
  if (fault.rank < 0 || fault.rank >= mesh.num_ranks()) {
    return absl::InvalidArgumentError(absl::StrFormat("--kill-rank %d: the mesh %s has ranks 0 to %d",
                                                      fault.rank, mesh.ToString(),
                                                      mesh.num_ranks() - 1));
  }
  const int64_t calls = CollectiveCalls(p.plan, mesh);
  if (fault.at_call < 0 || fault.at_call >= calls) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--kill-at %d: the plan %s makes %d collective calls per rank, so a fault at call %d "
        "(counted from 0) would never happen",
        fault.at_call, p.plan.Trace(), calls, fault.at_call));
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedCase> Prepare(const VerifyCase& c) {
  RESHARD_ASSIGN_OR_RETURN(PlannedCase p, PlanCase(c));
  RESHARD_ASSIGN_OR_RETURN(
      LocalTensor global, TestTensor(c.dtype, c.shape, c.data_seed, p.src.mesh().num_ranks()));
  return PreparedCase{c,
                      std::move(p.src),
                      std::move(p.dst),
                      std::move(p.options),
                      std::move(p.plan),
                      std::move(global)};
}

absl::StatusOr<RankResult> RunRank(const PreparedCase& p, Communicator& comm) {
  RankResult r;
  RESHARD_ASSIGN_OR_RETURN(r.tensor,
                           ShardOf(p.global, p.src, comm.coordinate(), p.spec_case.data_seed));
  RESHARD_RETURN_IF_ERROR(Redistribute(r.tensor, p.src, p.dst, p.plan, comm, &r.stats));
  return r;
}

namespace {

bool HasReduction(const Plan& plan) {
  for (const TransformInfo& info : plan.steps) {
    const StepKind k = info.step.kind;
    if (k == StepKind::kAllReduce || k == StepKind::kReduceScatter) return true;
  }
  return false;
}

std::string Steps(const Plan& plan) {
  std::vector<std::string> parts;
  for (const TransformInfo& info : plan.steps) parts.push_back(info.step.ToString());
  return absl::StrJoin(parts, " ");
}

// The rank's result against the plan made for its own coordinate: same
// steps, same logical shapes, and the bytes those shapes imply.
std::string CheckCounters(const PreparedCase& p, int64_t rank, const RankResult& r) {
  PlanOptions options = p.options;
  options.coordinate = p.src.mesh().Coordinate(rank);
  absl::StatusOr<Plan> mine = PlanRedistribution(p.src, p.dst, options);
  if (!mine.ok()) return absl::StrCat("planning for rank ", rank, ": ", mine.status().message());
  if (Steps(*mine) != Steps(p.plan)) {
    return absl::StrFormat("rank %d: the plan for its coordinate differs: %s vs %s", rank,
                           mine->Trace(), p.plan.Trace());
  }
  if (r.stats.steps.size() != mine->steps.size()) {
    return absl::StrFormat("rank %d: %d step counters for %d steps", rank, r.stats.steps.size(),
                           mine->steps.size());
  }
  const std::vector<int64_t> coord = p.src.mesh().Coordinate(rank);
  for (size_t i = 0; i < mine->steps.size(); ++i) {
    const TransformInfo& info = mine->steps[i];
    const StepStats& got = r.stats.steps[i];
    // Spec §10 in the state the step starts from: what graph plans report;
    // greedy plans report PyTorch's shapes instead (spec §8), which ignore
    // shard order, so the plan's states are the reference for both.
    const std::vector<int64_t> want_shape =
        LogicalShape(mine->states[i], info.step, p.src.mesh(), p.src.global_shape(), coord);
    if (got.step != info.step || got.logical_shape != want_shape) {
      return absl::StrFormat("rank %d step %d: ran %s on logical shape [%s], the plan says %s on [%s]",
                             rank, i + 1, got.step.ToString(), absl::StrJoin(got.logical_shape, ","),
                             info.step.ToString(), absl::StrJoin(want_shape, ","));
    }
    const StepBytes want = BytesOfStep(mine->states[i], info.step, want_shape, p.src.mesh(),
                                         coord, p.src.dtype());
    if (got.bytes_sent != want.sent || got.bytes_received != want.received) {
      return absl::StrFormat("rank %d step %d: sent/received %d/%d bytes, the plan implies %d/%d",
                             rank, i + 1, got.bytes_sent, got.bytes_received, want.sent,
                             want.received);
    }
  }
  return "";
}

std::string Describe(const LocalTensor& t, int64_t i) {
  return absl::StrFormat("%g", LoadAsDouble(t.data(), i, t.dtype()));
}

// Element index -> "[i,j,k]" in `shape`.
std::string Index(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return absl::StrCat("[", absl::StrJoin(idx, ","), "]");
}

// Every rank's data against the ground truth; "" when it matches.
std::string CheckData(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results) {
  const DType dtype = p.dst.dtype();
  const double tolerance = HasReduction(p.plan) ? ReductionTolerance(dtype, 64) : 0;
  bool partial_dst = false;
  for (const Placement& q : p.dst.state().placements()) partial_dst |= q.is_partial();
  if (!partial_dst) {
    for (size_t r = 0; r < results.size(); ++r) {
      const std::vector<int64_t> coord = p.src.mesh().Coordinate(r);
      absl::StatusOr<LocalTensor> want = ShardOf(p.global, p.dst, coord, p.spec_case.data_seed);
      if (!want.ok()) return std::string(want.status().message());
      const LocalTensor& got = results[r]->tensor;
      absl::StatusOr<int64_t> bad = FirstMismatch(got, *want, tolerance);
      if (!bad.ok()) return absl::StrCat("rank ", r, ": ", bad.status().message());
      if (*bad >= 0) {
        return absl::StrFormat("rank %d: element %s of its shard is %s, expected %s", r,
                               Index(got.shape(), *bad), Describe(got, *bad),
                               Describe(*want, *bad));
      }
    }
    return "";
  }
  // Local values of a Partial are not unique: check what they reduce to.
  std::vector<LocalTensor> shards;
  for (auto& r : results) {
    shards.push_back(LocalTensor::View(r->tensor.data(), r->tensor.dtype(), r->tensor.shape(),
                                       r->tensor.space()));
  }
  absl::StatusOr<LocalTensor> back = Reassemble(shards, p.dst);
  if (!back.ok()) return std::string(back.status().message());
  absl::StatusOr<int64_t> bad = FirstMismatch(*back, p.global, tolerance);
  if (!bad.ok()) return std::string(bad.status().message());
  if (*bad >= 0) {
    return absl::StrFormat("the ranks' results reduce to %s at global element %s, expected %s",
                           Describe(*back, *bad), Index(p.global.shape(), *bad),
                           Describe(p.global, *bad));
  }
  return "";
}

}  // namespace

CaseReport Check(const PreparedCase& p, std::vector<absl::StatusOr<RankResult>>& results) {
  CaseReport report;
  auto fail = [&](std::string detail) {
    report.outcome = Outcome::kFailed;
    report.detail = absl::StrCat("plan ", p.plan.Trace(), " (", AlgorithmName(p.plan.algorithm),
                                 "): ", std::move(detail));
    return report;
  };
  const DeviceMesh& mesh = p.src.mesh();
  if (static_cast<int64_t>(results.size()) != mesh.num_ranks()) {
    return fail(absl::StrFormat("%d results for %d ranks", results.size(), mesh.num_ranks()));
  }
  std::string errors;
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].ok()) {
      absl::StrAppend(&errors, "\n      rank ", r, ": ", results[r].status().ToString());
    }
  }
  if (!errors.empty()) return fail(absl::StrCat("ranks failed:", errors));
  if (std::string problem = CheckData(p, results); !problem.empty()) return fail(problem);
  for (size_t r = 0; r < results.size(); ++r) {
    std::string problem = CheckCounters(p, static_cast<int64_t>(r), *results[r]);
    if (!problem.empty()) return fail(std::move(problem));
  }
  for (const TransformInfo& info : p.plan.steps) {
    ++report.steps_by_kind[static_cast<int>(info.step.kind)];
    report.group_steps_by_kind[static_cast<int>(info.step.kind)] += info.step.group.size() > 1;
  }
  return report;
}

namespace {

CaseReport Skip(const absl::Status& s) {
  CaseReport r;
  r.outcome = Outcome::kSkipped;
  r.detail = std::string(s.message());
  r.unsupported = s.code() == absl::StatusCode::kUnimplemented;
  return r;
}

}  // namespace

bool IsSkip(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound ||
         s.code() == absl::StatusCode::kResourceExhausted ||
         s.code() == absl::StatusCode::kUnimplemented;
}

CaseReport VerifyOnThreads(const VerifyCase& c, const GlooOptions& options,
                           const Fault& fault) {
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) {
    if (IsSkip(p.status())) return Skip(p.status());
    return {Outcome::kFailed, absl::StrCat("bad case: ", p.status().ToString())};
  }
  const int64_t n = p->src.mesh().num_ranks();
  std::vector<absl::StatusOr<RankResult>> results;
  for (int64_t r = 0; r < n; ++r) results.emplace_back(absl::UnknownError("not run"));
  std::vector<absl::Status> connect = RunRanksOnThreads(
      p->src.mesh(), options, [&](GlooCommunicator& comm) {
        if (comm.rank() == fault.rank) {
          FaultyCommunicator faulty(comm, fault.at_call, [&comm] { comm.Abort(); });
          results[comm.rank()] = RunRank(*p, faulty);
        } else {
          results[comm.rank()] = RunRank(*p, comm);
        }
        return absl::OkStatus();
      });
  for (int64_t r = 0; r < n; ++r) {
    if (!connect[r].ok()) results[r] = connect[r];
  }
  return Check(*p, results);
}

namespace {

// A placement as one small integer for the stats files: kind * 8 + arg.
int PlacementCode(Placement p) {
  const int arg = p.is_shard() ? p.dim() : p.is_partial() ? static_cast<int>(p.op()) : 0;
  return static_cast<int>(p.kind()) * 8 + arg;
}

std::optional<Placement> PlacementFromCode(int code) {
  const int arg = code % 8;
  switch (code / 8) {
    case 0: return arg == 0 ? std::optional<Placement>(Placement::Replicate()) : std::nullopt;
    case 1: return Placement::Shard(arg);
    case 2:
      if (arg < kNumReduceOps) return Placement::Partial(static_cast<ReduceOp>(arg));
      return std::nullopt;
  }
  return std::nullopt;
}

// A step's entries as "m:d,m:d" (mesh dim joins tensor dim), "-" for none.
std::string EntriesCode(const ShardEntries& entries) {
  std::vector<std::string> parts;
  for (int i = 0; i < entries.size(); ++i) {
    parts.push_back(absl::StrCat(entries.mesh_dim(i), ":", entries.tensor_dim(i)));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ",");
}

std::optional<ShardEntries> EntriesFromCode(const std::string& code) {
  ShardEntries entries;
  if (code == "-") return entries;
  for (absl::string_view part : absl::StrSplit(code, ',')) {
    std::pair<std::string, std::string> md = absl::StrSplit(part, ':');
    int m = 0, d = 0;
    if (!absl::SimpleAtoi(md.first, &m) || !absl::SimpleAtoi(md.second, &d) || m < 0 ||
        m >= 16 || d < 0 || d >= 16 || entries.size() >= ShardEntries::kMax) {
      return std::nullopt;
    }
    entries.Append(m, d);
  }
  return entries;
}

// "group kind src dst entries sent received shape", e.g. "2 1 8 0 - 96 96 4,6".
std::string StatsLine(const StepStats& s) {
  return absl::StrCat(s.step.group.bits(), " ", static_cast<int>(s.step.kind), " ",
                      PlacementCode(s.step.src), " ", PlacementCode(s.step.dst), " ",
                      EntriesCode(s.step.entries), " ", s.bytes_sent, " ", s.bytes_received, " ",
                      absl::StrJoin(s.logical_shape, ","));
}

// The kind fits the placements: a one-rank group allows every kind a step
// may have (S -> P included); a permute has no placements of its own.
bool KindFits(int kind, Placement from, Placement to) {
  if (kind == static_cast<int>(StepKind::kPermute)) {
    return from == Placement::Replicate() && to == Placement::Replicate();
  }
  return StepKindFor(from, to, /*group_size=*/1) == static_cast<StepKind>(kind);
}

absl::StatusOr<StepStats> ParseStatsLine(const std::string& line) {
  std::istringstream fields(line);
  int group = 0, kind = 0, src = 0, dst = 0;
  StepStats s;
  std::string entries, shape;
  fields >> group >> kind >> src >> dst >> entries >> s.bytes_sent >> s.bytes_received >> shape;
  const std::optional<Placement> from = PlacementFromCode(src), to = PlacementFromCode(dst);
  const std::optional<ShardEntries> joins = EntriesFromCode(entries);
  if (fields.fail() || !from || !to || !joins || group <= 0 || group > 255 ||
      !KindFits(kind, *from, *to)) {
    return absl::DataLossError("bad stats line: " + line);
  }
  s.step = Step{MeshDimSet::FromBits(static_cast<uint8_t>(group)), static_cast<StepKind>(kind),
                *from, *to, *joins};
  for (absl::string_view e : absl::StrSplit(shape, ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(e, &v)) return absl::DataLossError("bad stats line: " + line);
    s.logical_shape.push_back(v);
  }
  return s;
}

}  // namespace

absl::Status WriteRankResult(const std::string& dir, int64_t rank, const RankResult& r) {
  {
    std::ofstream out(absl::StrCat(dir, "/result.", rank), std::ios::binary);
    out.write(static_cast<const char*>(r.tensor.data()), r.tensor.nbytes());
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", dir, "/result.", rank));
  }
  std::ofstream out(absl::StrCat(dir, "/stats.", rank));
  for (const StepStats& s : r.stats.steps) out << StatsLine(s) << "\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", dir, "/stats.", rank));
  return absl::OkStatus();
}

absl::StatusOr<RankResult> ReadRankResult(const std::string& dir, int64_t rank,
                                          const PreparedCase& p) {
  RankResult r;
  RESHARD_ASSIGN_OR_RETURN(
      r.tensor, LocalTensor::Zeros(p.dst.dtype(), p.dst.LocalShape(p.dst.mesh().Coordinate(rank))));
  const std::string result_path = absl::StrCat(dir, "/result.", rank);
  std::ifstream in(result_path, std::ios::binary);
  in.read(static_cast<char*>(r.tensor.data()), r.tensor.nbytes());
  if (!in || in.peek() != std::ifstream::traits_type::eof()) {
    return absl::DataLossError(absl::StrFormat("%s: missing, or not %d bytes", result_path,
                                               r.tensor.nbytes()));
  }
  std::ifstream stats(absl::StrCat(dir, "/stats.", rank));
  std::string line;
  while (std::getline(stats, line)) {
    RESHARD_ASSIGN_OR_RETURN(StepStats s, ParseStatsLine(line));
    r.stats.steps.push_back(std::move(s));
  }
  return r;
}

}  // namespace reshard
