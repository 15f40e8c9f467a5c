// Ground truth for distributed tensors, computed directly (no collectives):
// which part of the global tensor a rank holds in a DistSpec, that part as a
// tensor, and the global tensor rebuilt from every rank's part. Tests and
// `reshard verify` compare the executor's results with these.
//
//   LocalTensor global = *TestTensor(DType::kF32, {13, 8}, /*seed=*/7, /*num_ranks=*/8);
//   absl::StatusOr<LocalTensor> mine = ShardOf(global, spec, coordinate, /*seed=*/7);
//   ...
//   absl::StatusOr<LocalTensor> back = Reassemble(all_ranks_shards, spec);  // == global
//
// Partial mesh dims: ShardOf gives each rank local values whose reduction
// along the mesh dim is the global value, varied per element and seed:
//   sum   floats: small integers summing exactly to the value; integers: one
//         rank holds the value, the others 0 (no wrap-around)
//   avg   floats: value + small integers summing to 0; integers: the value
//   max   one rank holds the value, the others smaller values (min: larger)
//   prod  one rank holds the value, the others 1
// Each mesh dim's split depends on the element and the seed but not on the
// rank's other coordinates, so values are equal along avg dims and one rank
// per sum dim holds an integer's value: a plan may reduce the Partial dims in
// any order and still get the value exactly, even with integer avg's
// truncation. With TestTensor's small integers every such reduction is exact
// in every dtype, so results can be compared exactly (or to a tight
// tolerance where a float avg divides by 3).
#ifndef RESHARD_HARNESS_GROUND_TRUTH_H_
#define RESHARD_HARNESS_GROUND_TRUTH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dist_spec.h"

namespace reshard {

// The block of the global tensor held at `coordinate`: per tensor dim, rows
// [offset, offset + shape) (spec §2: splits in shard order, torch.chunk sizes).
struct ShardRegion {
  std::vector<int64_t> offset;
  std::vector<int64_t> shape;
};
ShardRegion RegionOf(const DistSpec& spec, absl::Span<const int64_t> coordinate);

// A deterministic host tensor of small integers (stored in `dtype`) whose
// Partial splits (above) stay exact on a mesh of up to `num_ranks` ranks.
absl::StatusOr<LocalTensor> TestTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed,
                                       int64_t num_ranks);

// The shard of host tensor `global` held at `coordinate` in `spec`, with the
// Partial values described above (deterministic in `seed`). InvalidArgument
// when global's shape or dtype differ from spec's or the coordinate is bad.
absl::StatusOr<LocalTensor> ShardOf(const LocalTensor& global, const DistSpec& spec,
                                    absl::Span<const int64_t> coordinate, uint64_t seed = 0);

// The global tensor from every rank's local tensor (`shards[rank]`, host):
// Partial mesh dims are reduced (in double, then stored in the dtype) and the
// blocks placed by RegionOf. Replicas must agree: for each global element
// the first rank that holds it (after reduction) is used, and
// FailedPrecondition names the first element where another replica differs.
// InvalidArgument for a wrong count, shape or dtype of shards.
absl::StatusOr<LocalTensor> Reassemble(absl::Span<const LocalTensor> shards, const DistSpec& spec);

// Largest |a - b| allowed between results of reductions in `dtype` with
// magnitude around `scale` (0 for integer dtypes).
double ReductionTolerance(DType dtype, double scale);

// The first element index where a and b differ by more than `tolerance` (as
// doubles; bitwise when tolerance is 0 and the dtype is an integer), or -1.
// InvalidArgument when shapes or dtypes differ.
absl::StatusOr<int64_t> FirstMismatch(const LocalTensor& a, const LocalTensor& b, double tolerance);

}  // namespace reshard

#endif  // RESHARD_HARNESS_GROUND_TRUTH_H_
