// Fuzzes layout lists (`reshard costs --layouts`; formats/layout_list.h): any
// text must give layouts or an error of valid, short text; at most
// max_layouts are taken. The layouts accepted are priced pairwise by
// CostMatrix in native mode under a small edge budget on a mesh of up to 8
// dims: every pair gets a finite cost or a typed limit error, never a crash
// or a search that runs on (issue 19).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/layout_list.h"
#include "fuzz/fuzz_checks.h"
#include "planner/cost_matrix.h"
#include "planner/costs/cost_model_registry.h"
#include "planner/steps/plan_limit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reshard;
  if (size < 1) return 0;
  // The first byte picks the mesh: 1 to 8 dims of size 2.
  const std::vector<int64_t> sizes(1 + data[0] % 8, 2);
  const DeviceMesh mesh = *DeviceMesh::Create(sizes);
  const std::vector<int64_t> shape = {16, 16, 16};
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const absl::StatusOr<std::vector<DistState>> layouts =
      ParseLayoutList(text, "fuzz", mesh, shape, DType::kF32, /*max_layouts=*/4);
  if (!layouts.ok()) {
    fuzz::CheckText(layouts.status().message(), 2000);
    return 0;
  }
  if (layouts->size() > 4) fuzz::Fail("more layouts than max_layouts", std::string(text));
  CostMatrixOptions options;
  options.threads = 1;  // a fuzzer runs many inputs: no threads per input
  options.mode = PlanMode::kNative;
  options.cost_model = *MakeCostModel("alpha-beta", 8);
  options.max_search_edges = 20000;
  const absl::StatusOr<CostMatrixResult> m =
      CostMatrix(mesh, shape, DType::kF32, *layouts, *layouts, options);
  if (!m.ok()) {
    if (!PlanLimitOf(m.status())) fuzz::Fail("an untyped failure", m.status().ToString());
    return 0;
  }
  for (const auto& row : *m) {
    for (const auto& cost : row) {
      if (cost && !std::isfinite(*cost)) fuzz::Fail("an infinite cost", std::string(text));
    }
  }
  return 0;
}
