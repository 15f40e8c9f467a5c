// EdgeSource: which steps leave a state, for one search. The compat graph
// (spec §4) and the native graph (spec §4.2, optionally under a memory
// limit, spec §12) are the two kinds; the graph planner and CostMatrix hand
// one to StateSearch.
#ifndef RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_
#define RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"
#include "planner/layout/dtype.h"
#include "planner/steps/step.h"
#include "planner/steps/step_memory.h"

namespace reshard {

class EdgeSource {
 public:
  virtual ~EdgeSource() = default;
  // Appends the steps out of `state` to *out, in generation order (ties).
  virtual void Append(const DistState& state, std::vector<Step>* out) const = 0;
};

// Spec §4: PyTorch's edges, exactly.
class CompatEdges : public EdgeSource {
 public:
  CompatEdges(int tensor_ndim, unsigned partial_ops)
      : tensor_ndim_(tensor_ndim), partial_ops_(partial_ops) {}
  void Append(const DistState& state, std::vector<Step>* out) const override;

 private:
  int tensor_ndim_;
  unsigned partial_ops_;
};

// Spec §4.2: the native edges towards `goal`, leaving out every step whose
// peak memory (step_memory.h, counted for `backend`) exceeds `max_memory`
// bytes per rank.
class NativeEdges : public EdgeSource {
 public:
  NativeEdges(const DeviceMesh& mesh, std::vector<int64_t> global_shape, DType dtype,
              const DistState& goal, unsigned partial_ops,
              int64_t max_memory = std::numeric_limits<int64_t>::max(),
              MemoryBackend backend = MemoryBackend::kGloo);
  void Append(const DistState& state, std::vector<Step>* out) const override;

 private:
  DeviceMesh mesh_;
  std::vector<int64_t> global_shape_;
  DType dtype_;
  DistState goal_;
  unsigned partial_ops_;
  int64_t max_memory_;
  MemoryBackend backend_;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_SEARCH_EDGE_SOURCE_H_
