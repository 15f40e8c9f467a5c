// Meshes and layouts for tests, from literals known to be valid: a bad one
// fails the test that wrote it (with the parser's message) instead of
// returning a status every caller would have to check.
#ifndef RESHARD_TESTS_UTIL_SPEC_HELPERS_H_
#define RESHARD_TESTS_UTIL_SPEC_HELPERS_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/chunk.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/slice_routes.h"
#include "planner/steps/step.h"

namespace reshard::test_util {

inline DeviceMesh Mesh(std::vector<int64_t> sizes) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(std::move(sizes));
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *std::move(mesh);
}

// `text` in the notation (spec §3) on `mesh`.
inline DistSpec Spec(const DeviceMesh& mesh, absl::string_view text, std::vector<int64_t> shape,
                     DType dtype = DType::kF32) {
  absl::StatusOr<DistSpec> spec = DistSpec::Parse(mesh, text, std::move(shape), dtype);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return *std::move(spec);
}

// Every member's block of `in` at `logical`, a box per member in member
// order (what RouteSlices takes), built afresh from GroupSlices: what the
// exchange pricing of permute_exchange.h routes, without its grids.
inline std::vector<Box> MemberBlocks(const DistState& in, MeshDimSet group, const DeviceMesh& mesh,
                                     const std::vector<int64_t>& logical) {
  std::vector<Box> blocks(mesh.GroupSize(group), Box(logical.size()));
  for (size_t d = 0; d < logical.size(); ++d) {
    const std::vector<Slice> slices =
        GroupSlices(mesh, group, GroupSplitsIn(in, group, static_cast<int>(d)), logical[d]);
    for (size_t j = 0; j < slices.size(); ++j) blocks[j][d] = slices[j];
  }
  return blocks;
}

// The load of `step` out of `in` from routes built afresh, box by box
// (RouteSlices over MemberBlocks): what ExchangeLoadOf must give.
inline RouteLoad FreshRouteLoad(const DistState& in, const Step& step, const DeviceMesh& mesh,
                                const std::vector<int64_t>& logical) {
  const std::vector<Box> held = MemberBlocks(in, step.group, mesh, logical);
  const std::vector<Box> wanted = MemberBlocks(ApplyStep(in, step), step.group, mesh, logical);
  return LoadOfRoutes(RouteSlices(held, wanted), static_cast<int64_t>(held.size()));
}

// Every field of a RouteLoad, to compare two in one expectation.
inline auto LoadFields(const RouteLoad& load) {
  return std::make_tuple(load.max_sent, load.max_received, load.max_sent_plus_received,
                         load.max_messages, load.total_sent);
}

// The state of `placements` with each tensor dim's Shard mesh dims in a
// random order drawn from `rng`, or in ascending order (`ascending`): random
// states for the generators of the property tests.
inline DistState WithShardOrders(const std::vector<Placement>& placements, int tensor_ndim,
                                 bool ascending, std::mt19937_64* rng) {
  ShardOrder order;
  for (int d = 0; d < tensor_ndim; ++d) {
    ShardOrderEntry entry{d, {}};
    for (int m = 0; m < static_cast<int>(placements.size()); ++m) {
      if (placements[m] == Placement::Shard(d)) entry.mesh_dims.push_back(m);
    }
    if (entry.mesh_dims.empty()) continue;
    if (!ascending) std::shuffle(entry.mesh_dims.begin(), entry.mesh_dims.end(), *rng);
    order.push_back(entry);
  }
  return *DistState::Create(placements, order);
}

}  // namespace reshard::test_util

#endif  // RESHARD_TESTS_UTIL_SPEC_HELPERS_H_
