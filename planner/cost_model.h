// Cost models: the price of one step, used both to search (graph planner) and
// to report (every plan). Spec §6 defines the two compat models:
//
//   "pytorch-const"  all_to_all 1, all_gather 2, reduce_scatter 2, all_reduce 4,
//                    local steps 0 (unitless)
//   "pytorch"        PyTorch's alpha-beta model, microseconds
//
// A model is made for one problem (mesh, shape, dtype, devices per host), so
// it can precompute what does not change during a search.
#ifndef RESHARD_PLANNER_COST_MODEL_H_
#define RESHARD_PLANNER_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mesh/device_mesh.h"
#include "planner/dist_state.h"
#include "planner/placement.h"

namespace reshard {

// What a cost model may look at.
struct CostProblem {
  DeviceMesh mesh;
  std::vector<int64_t> global_shape;
  int itemsize = 4;
  int64_t devices_per_host = 8;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual absl::string_view name() const = 0;
  // Cost of moving `mesh_dim` from `src` to `dst` while the tensor is in
  // `current` (the edge's source state). Only legal steps are asked.
  virtual double StepCost(const DistState& current, int mesh_dim, Placement src,
                          Placement dst) const = 0;
};

// The names MakeCostModel accepts, for --help and error messages.
std::vector<std::string> CostModelNames();

// InvalidArgument for an unknown name (listing the known ones) or
// devices_per_host < 1.
absl::StatusOr<std::unique_ptr<CostModel>> MakeCostModel(absl::string_view name,
                                                         const CostProblem& problem);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_MODEL_H_
