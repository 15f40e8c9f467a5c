#include "planner/greedy_planner.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/plan.h"

namespace reshard {
namespace {

// S -> P and P(x) -> P(y) have no collective (spec §4); PyTorch's greedy
// planner fails on them, and so do we, except for S -> P on a size-1 mesh
// dim, which moves nothing (PyTorch skips size-1 mesh dims when it executes).
absl::Status CheckStep(const DeviceMesh& mesh, const GreedyStep& step) {
  if (!IsLegalStep(step.src, step.dst, mesh.size(step.mesh_dim))) {
    return absl::NotFoundError(absl::StrCat(
        "no_path: the greedy planner would need ", step.src.ToString(), " -> ",
        step.dst.ToString(), " on mesh dim ", step.mesh_dim,
        ", which no collective does; the graph planner (--algorithm graph) routes through R"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<GreedyStep>> GreedySteps(const DeviceMesh& mesh,
                                                    absl::Span<const Placement> src,
                                                    absl::Span<const Placement> dst) {
  const int ndim = mesh.ndim();
  std::vector<GreedyStep> steps;
  auto emit = [&](int m, Placement from, Placement to) -> absl::Status {
    steps.push_back({m, from, to});
    return CheckStep(mesh, steps.back());
  };
  if (ndim == 1) {
    if (src[0] != dst[0]) {
      if (absl::Status s = emit(0, src[0], dst[0]); !s.ok()) return s;
    }
    return steps;
  }
  std::vector<Placement> cur(src.begin(), src.end());
  int64_t num_shards = 1;
  for (int m = 0; m < ndim; ++m) {
    if (src[m].is_shard()) num_shards *= mesh.size(m);
  }
  // Pass one, last mesh dim first: a Shard whose earlier mesh dims on the same
  // tensor dim differ between current and target must go through R first.
  if (num_shards > 1) {
    for (int m = ndim - 1; m >= 0; --m) {
      Placement target = dst[m];
      if (target.is_shard()) {
        for (int i = 0; i < m; ++i) {
          if ((cur[i] == target) != (dst[i] == target)) {
            target = Placement::Replicate();
            break;
          }
        }
      }
      if (cur[m] != target) {
        if (absl::Status s = emit(m, cur[m], target); !s.ok()) return s;
        cur[m] = target;
      }
    }
  }
  // Pass two, first mesh dim first: whatever still differs.
  for (int m = 0; m < ndim; ++m) {
    if (cur[m] != dst[m]) {
      if (absl::Status s = emit(m, cur[m], dst[m]); !s.ok()) return s;
      cur[m] = dst[m];
    }
  }
  return steps;
}

}  // namespace reshard
