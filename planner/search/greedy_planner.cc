#include "planner/search/greedy_planner.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace reshard {
namespace {

// The step for mesh dim m. S -> P and P(x) -> P(y) have no kind (spec §4);
// PyTorch's executor fails on them, and so do we, except on a size-1 mesh
// dim, where they move nothing (spec §8; PyTorch plans them and skips size-1
// mesh dims when it executes).
absl::StatusOr<Step> GreedyStep(const DeviceMesh& mesh, int m, Placement from, Placement to) {
  std::optional<StepKind> kind = StepKindFor(from, to, mesh.size(m));
  if (!kind) {
    return absl::NotFoundError(absl::StrCat(
        "no_path: the greedy planner would need ", from.ToString(), " -> ", to.ToString(),
        " on mesh dim ", m,
        ", which no collective does; the graph planner (`algorithm` graph) routes through R"));
  }
  return Step{MeshDimSet::Single(m), *kind, from, to};
}

// Pass one's target for mesh dim m (spec §8): a Shard whose earlier mesh dims
// on the same tensor dim differ between current and target goes through R.
Placement PassOneTarget(int m, absl::Span<const Placement> cur, absl::Span<const Placement> dst) {
  const Placement target = dst[m];
  if (!target.is_shard()) return target;
  for (int i = 0; i < m; ++i) {
    if ((cur[i] == target) != (dst[i] == target)) return Placement::Replicate();
  }
  return target;
}

}  // namespace

absl::StatusOr<std::vector<Step>> GreedySteps(const DeviceMesh& mesh,
                                              absl::Span<const Placement> src,
                                              absl::Span<const Placement> dst) {
  const int ndim = mesh.ndim();
  std::vector<Step> steps;
  std::vector<Placement> cur(src.begin(), src.end());
  auto emit = [&](int m, Placement to) -> absl::Status {
    RESHARD_ASSIGN_OR_RETURN(Step step, GreedyStep(mesh, m, cur[m], to));
    steps.push_back(step);
    cur[m] = to;
    return absl::OkStatus();
  };
  if (ndim == 1) {
    if (src[0] != dst[0]) RESHARD_RETURN_IF_ERROR(emit(0, dst[0]));
    return steps;
  }
  int64_t num_shards = 1;
  for (int m = 0; m < ndim; ++m) {
    if (src[m].is_shard()) num_shards *= mesh.size(m);
  }
  // Pass one, last mesh dim first.
  if (num_shards > 1) {
    for (int m = ndim - 1; m >= 0; --m) {
      const Placement target = PassOneTarget(m, cur, dst);
      if (cur[m] != target) RESHARD_RETURN_IF_ERROR(emit(m, target));
    }
  }
  // Pass two, first mesh dim first: whatever still differs.
  for (int m = 0; m < ndim; ++m) {
    if (cur[m] != dst[m]) RESHARD_RETURN_IF_ERROR(emit(m, dst[m]));
  }
  return steps;
}

}  // namespace reshard
