// Plans one redistribution through reshard's public API from outside
// reshard's workspace: PyTorch's own shard-order example on a 2x2x2 mesh
// (a 8x8x8 f32 tensor whose dim 0 is split over mesh dims 1, 0, 2 in that
// order becomes replicated on mesh dim 0 and split over mesh dims 1, 2).
//
// Prints the trace and one line per step; exits 1 on any error or if the plan
// does not lead from the source to the destination.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"
#include "planner/layout/dtype.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "consumer: %s\n", what.c_str());
  return 1;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace

int main() {
  const char* kSrc = "S(0)[1]S(0)[0]S(0)[2]";
  const char* kDst = "RS(0)[0]S(0)[1]";

  absl::StatusOr<reshard::DeviceMesh> mesh = reshard::DeviceMesh::Create({2, 2, 2});
  if (!mesh.ok()) return Fail(mesh.status().ToString());
  absl::StatusOr<reshard::DistSpec> src =
      reshard::DistSpec::Parse(*mesh, kSrc, {8, 8, 8}, reshard::DType::kF32);
  if (!src.ok()) return Fail(src.status().ToString());
  absl::StatusOr<reshard::DistSpec> dst =
      reshard::DistSpec::Parse(*mesh, kDst, {8, 8, 8}, reshard::DType::kF32);
  if (!dst.ok()) return Fail(dst.status().ToString());

  absl::StatusOr<reshard::Plan> plan =
      reshard::PlanRedistribution(*src, *dst, reshard::PlanOptions());
  if (!plan.ok()) return Fail(plan.status().ToString());

  // A plan is a chain of states from the source to the destination.
  if (plan->Trace().empty() || plan->steps.empty() ||
      plan->states.size() != plan->steps.size() + 1) {
    return Fail("malformed plan: '" + plan->Trace() + "'");
  }
  if (plan->states.front() != src->state() || plan->states.back() != dst->state()) {
    return Fail("plan '" + plan->Trace() + "' does not lead from " + kSrc + " to " + kDst);
  }

  std::printf("%s\n", plan->Trace().c_str());
  for (const reshard::TransformInfo& info : plan->steps) {
    const reshard::Step& step = info.step;
    std::printf("  mesh dim %d: %s -> %s  %-14s logical shape %s  cost %.3f\n", step.mesh_dim(),
                step.src.ToString().c_str(), step.dst.ToString().c_str(),
                std::string(reshard::StepKindName(step.kind)).c_str(),
                ShapeString(info.logical_shape).c_str(), info.cost);
  }
  std::printf("total cost %.3f us (%s planner)\n", plan->cost,
              std::string(reshard::AlgorithmName(plan->algorithm)).c_str());
  return 0;
}
