// Test checks of a crossing's routes, shared by the tests of relayed and
// rail-balanced crossings (spec §14 "Relaying", "Rails").
#ifndef RESHARD_PLANNER_CROSS_MESH_CROSSING_TEST_UTIL_H_
#define RESHARD_PLANNER_CROSS_MESH_CROSSING_TEST_UTIL_H_

#include <string>

#include "planner/cross_mesh/cross_mesh_plan.h"

namespace reshard {

// Each route's box is its sender's own (held) or one it received whole in
// an earlier round; each participant receives each element of its block
// that it does not hold once (ReceiveLowerBoundBytes), and what it receives
// beyond that it sends on. Failures name `name`.
void ExpectRoutable(const CrossMeshPlan& p, const std::string& name);

}  // namespace reshard

#endif  // RESHARD_PLANNER_CROSS_MESH_CROSSING_TEST_UTIL_H_
