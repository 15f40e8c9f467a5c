// Element types (spec §1) and their item sizes.
#ifndef RESHARD_PLANNER_LAYOUT_DTYPE_H_
#define RESHARD_PLANNER_LAYOUT_DTYPE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace reshard {

enum class DType : uint8_t { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

// Short name: "f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool".
absl::string_view DTypeName(DType dtype);
// Bytes per element: 8, 4, 2, 2, 8, 4, 2, 1, 1, 1.
int ItemSize(DType dtype);
// Accepts the short names and the long ones ("float32", "bfloat16", "int64", ...).
absl::StatusOr<DType> ParseDType(absl::string_view name);

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_DTYPE_H_
