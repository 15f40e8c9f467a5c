// Meshes and layouts for tests, from literals known to be valid: a bad one
// fails the test that wrote it (with the parser's message) instead of
// returning a status every caller would have to check.
#ifndef RESHARD_TESTS_SPEC_HELPERS_H_
#define RESHARD_TESTS_SPEC_HELPERS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"

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

}  // namespace reshard::test_util

#endif  // RESHARD_TESTS_SPEC_HELPERS_H_
