// Fuzzes the notation parser (planner/layout/notation.h) on any bytes: it must
// never crash, its errors must be short valid UTF-8, and a state it accepts
// must print (DistState::ToString) as text that parses back to itself.
//
// Input: byte 0 picks the mesh (1 to 8 dims of size 1 to 4), byte 1 the
// tensor's dims (1 to 8); the rest is the text.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_checks.h"
#include "mesh/device_mesh.h"
#include "planner/layout/notation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reshard;
  if (size < 2) return 0;
  const int mesh_ndim = 1 + data[0] % 8;
  std::vector<int64_t> sizes;
  for (int m = 0; m < mesh_ndim; ++m) sizes.push_back(1 + (data[0] / 8 + m) % 4);
  const int tensor_ndim = 1 + data[1] % 8;
  const absl::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const DeviceMesh mesh = *DeviceMesh::Create(sizes);
  absl::StatusOr<ParsedState> parsed = ParseDistState(text, mesh, tensor_ndim);
  if (!parsed.ok()) {
    fuzz::CheckText(parsed.status().message(), 2000);
    return 0;
  }
  const std::string printed = parsed->state.ToString();
  fuzz::CheckText(printed, 1000);
  absl::StatusOr<ParsedState> again = ParseDistState(printed, mesh, tensor_ndim);
  if (!again.ok() || again->state != parsed->state)
    fuzz::Fail("ToString does not round-trip", printed);
  return 0;
}
