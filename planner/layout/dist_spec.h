// DistSpec: everything that describes a distributed tensor (mesh, placements
// and shard order, global shape, dtype), validated once at construction.
#ifndef RESHARD_PLANNER_LAYOUT_DIST_SPEC_H_
#define RESHARD_PLANNER_LAYOUT_DIST_SPEC_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"

namespace reshard {

// Bytes of the global tensor must stay below 2^53 so that the cost models'
// arithmetic is exact (spec §6 divides the byte count in floating point).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 53;

class DistSpec {
 public:
  // InvalidArgument when the shape has 0 or more than kMaxTensorDims dims, a
  // size < 1, more than kMaxTensorBytes bytes, when the state's mesh dims
  // differ from the mesh's, a Shard names a tensor dim out of range, or
  // Partial ops are mixed other than exactly {sum, avg}.
  static absl::StatusOr<DistSpec> Create(DeviceMesh mesh, DistState state,
                                         std::vector<int64_t> global_shape, DType dtype);

  // Parses `notation` (notation.h) and validates as Create.
  static absl::StatusOr<DistSpec> Parse(DeviceMesh mesh, absl::string_view notation,
                                        std::vector<int64_t> global_shape, DType dtype);

  const DeviceMesh& mesh() const { return mesh_; }
  const DistState& state() const { return state_; }
  // Whether any mesh dim holds a Partial (the data must still be reduced).
  bool has_partial() const { return state_.PartialOps() != 0; }
  const std::vector<int64_t>& global_shape() const { return global_shape_; }
  int tensor_ndim() const { return static_cast<int>(global_shape_.size()); }
  DType dtype() const { return dtype_; }
  // True when the notation used StridedShard (spec §9).
  bool strided_input() const { return strided_input_; }

  // Shape of the local shard at `coordinate` (chunk.h, LocalShape).
  std::vector<int64_t> LocalShape(absl::Span<const int64_t> coordinate) const;

 private:
  DistSpec(DeviceMesh mesh, DistState state, std::vector<int64_t> shape, DType dtype)
      : mesh_(std::move(mesh)), state_(state), global_shape_(std::move(shape)), dtype_(dtype) {}

  DeviceMesh mesh_;
  DistState state_;
  std::vector<int64_t> global_shape_;
  DType dtype_;
  bool strided_input_ = false;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_DIST_SPEC_H_
