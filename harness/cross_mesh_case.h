// A cross-mesh verify case (spec §14): a move from a layout on one mesh of
// global ranks to a layout on another, plus a data seed, as `reshard verify
// --dst-mesh ...` takes it on the command line, and the generator of random
// ones (`reshard verify --random N --cross-mesh`).
//
//   CrossMeshCase c = RandomCrossMeshCase(/*seed=*/7, /*max_ranks=*/8, /*max_union=*/12);
//   std::cerr << c.CommandLine();  // "reshard verify --mesh 2,2 --dst-mesh 3 ..."
#ifndef RESHARD_HARNESS_CROSS_MESH_CASE_H_
#define RESHARD_HARNESS_CROSS_MESH_CASE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/costs/cost_model.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/planner.h"

namespace reshard {

struct CrossMeshCase {
  std::vector<int64_t> mesh;      // the source mesh
  std::vector<int64_t> dst_mesh;  // the destination mesh
  // Global ranks of each mesh's ranks (row-major); empty: 0 .. size - 1.
  std::vector<int64_t> src_ranks;
  std::vector<int64_t> dst_ranks;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  std::string src;
  std::string dst;
  PlanMode mode = PlanMode::kNative;
  uint64_t data_seed = 0;
  // PlanOptions::max_memory, bytes per rank (spec §14 "Memory": the
  // crossing in rounds); 0: no limit.
  int64_t max_memory = 0;
  // PlanOptions::cost_model (null: the mode's default) and the flags that
  // name it, as `reshard plan` takes them (empty: not given; Flags() repeats
  // them): --cost-model, --profile, --devices-per-host.
  std::shared_ptr<const CostModel> cost_model;
  std::string cost_model_name, profile, devices_per_host;

  // "--mesh 2,2 --dst-mesh 3 --src-ranks 0,1,2,3 --dst-ranks 4,1,5 --shape
  // 7,5 --dtype i32 --src 'S(0)R' --dst 'S(1)' --mode native --seed 5", and
  // " --plan-max-memory B" with a limit, the cost model's flags where given.
  std::string Flags() const;
  // "reshard verify " + Flags(): a line to paste back into a shell.
  std::string CommandLine() const;
};

// How a move's two rank sets relate (for coverage counts).
enum class RankSets { kDisjoint, kOverlapping, kEqual };
RankSets RankSetsOf(const CrossMeshPlan& plan);

// The case parsed into a request (InvalidArgument for a bad mesh, shape or
// layout; PlanCrossMesh checks the rank lists).
absl::StatusOr<CrossMeshRequest> RequestOf(const CrossMeshCase& c);

// A random case, deterministic in `seed`: meshes of 1 to 3 dims with at most
// `max_ranks` ranks each (size-1 dims included), tensors of 1 to 3 dims small
// enough for uneven and empty shards, every dtype, Shard, Replicate and
// Partial (sum, avg, max, min: every op the crossing's steps before and
// after run exactly) on either side, random shard orders; rank sets a third
// each disjoint, overlapping and equal (a remesh, the destination's ranks
// permuted), the union at most `max_union` ranks (overlapping instead where
// disjoint sets would need more).
CrossMeshCase RandomCrossMeshCase(uint64_t seed, int64_t max_ranks, int64_t max_union);

}  // namespace reshard

#endif  // RESHARD_HARNESS_CROSS_MESH_CASE_H_
