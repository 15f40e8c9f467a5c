#include "harness/prepared_case.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "harness/ground_truth.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/notation.h"

namespace reshard {

namespace {

// A case parsed and planned, before any data exists.
struct PlannedCase {
  DistSpec src;
  DistSpec dst;
  PlanOptions options{PlanMode::kPyTorch};
  Plan plan;
};

absl::StatusOr<PlannedCase> PlanCase(const VerifyCase& c) {
  RESHARD_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create(c.mesh));
  RESHARD_ASSIGN_OR_RETURN(DistSpec src, DistSpec::Parse(mesh, c.src, c.shape, c.dtype));
  RESHARD_ASSIGN_OR_RETURN(DistSpec dst, DistSpec::Parse(mesh, c.dst, c.shape, c.dtype));
  RESHARD_RETURN_IF_ERROR(CheckPartialsReducible(src, dst, "dtype"));
  PlanOptions options{c.mode};  // native: the native default cost model
  options.algorithm = c.algorithm;
  options.coordinate.assign(mesh.ndim(), 0);
  RESHARD_ASSIGN_OR_RETURN(Plan plan, PlanRedistribution(src, dst, options));
  RESHARD_RETURN_IF_ERROR(CheckRunnable(plan, mesh, c.dtype));
  return PlannedCase{std::move(src), std::move(dst), std::move(options), std::move(plan)};
}

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
  if (dst.has_partial()) bytes += 8 * ranks * dst_local + (item + 16) * global;
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
        ShownBytes(bytes), ShownBytes(Elements(c.shape) * ItemSize(c.dtype)),
        ShownBytes(limits.max_bytes)));
  }
  if (fault.rank == -1) return absl::OkStatus();
  if (fault.rank < 0 || fault.rank >= mesh.num_ranks()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--kill-rank %d: the mesh %s has ranks 0 to %d", fault.rank,
                        mesh.ToString(), mesh.num_ranks() - 1));
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

absl::Status CheckPartialsReducible(const DistSpec& src, const DistSpec& dst,
                                    absl::string_view dtype_name) {
  if (src.dtype() != DType::kBool || (!src.has_partial() && !dst.has_partial())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      dtype_name,
      " bool: Partial placements (pending reductions) are not defined on bool data; use u8 or "
      "i32"));
}

absl::Status CheckRunnable(const Plan& plan, const DeviceMesh& mesh, DType dtype) {
  for (const TransformInfo& info : plan.steps) {
    if (dtype == DType::kBool && info.step.dst.is_partial()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dtype bool: the plan ", plan.Trace(),
                       " goes through a Partial, which bool data cannot reduce; use u8 or i32"));
    }
    if (!RunsOnData(info.step, mesh.GroupSize(info.step.group))) {
      return absl::UnimplementedError(
          absl::StrCat("the plan ", plan.Trace(), " needs R->P(prod), which has no exact split"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedCase> Prepare(const VerifyCase& c) {
  RESHARD_ASSIGN_OR_RETURN(PlannedCase p, PlanCase(c));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor global,
                           TestTensor(c.dtype, c.shape, c.data_seed, p.src.mesh().num_ranks()));
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

bool IsSkip(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound ||
         s.code() == absl::StatusCode::kResourceExhausted ||
         s.code() == absl::StatusCode::kUnimplemented;
}

}  // namespace reshard
