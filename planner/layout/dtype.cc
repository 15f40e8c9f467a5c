#include "planner/layout/dtype.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace reshard {
namespace {

struct DTypeInfo {
  DType dtype;
  absl::string_view name;  // short name, printed
  absl::string_view long_name;
  absl::string_view alias;  // torch's other spelling ("double", "half", ...), or empty
  int item_size;
};

// Spec §1 item sizes. Long names and aliases follow torch's dtype names.
constexpr DTypeInfo kDTypes[] = {
    {DType::kF64, "f64", "float64", "double", 8}, {DType::kF32, "f32", "float32", "float", 4},
    {DType::kF16, "f16", "float16", "half", 2},   {DType::kBF16, "bf16", "bfloat16", "", 2},
    {DType::kI64, "i64", "int64", "long", 8},     {DType::kI32, "i32", "int32", "int", 4},
    {DType::kI16, "i16", "int16", "short", 2},    {DType::kI8, "i8", "int8", "", 1},
    {DType::kU8, "u8", "uint8", "", 1},           {DType::kBool, "bool", "bool", "", 1},
};

const DTypeInfo& Info(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info;
  }
  return kDTypes[1];  // unreachable: every enumerator is listed
}

}  // namespace

absl::string_view DTypeName(DType dtype) { return Info(dtype).name; }

int ItemSize(DType dtype) { return Info(dtype).item_size; }

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  // "torch.float32" is how users copy it from Python.
  absl::string_view bare = name;
  if (absl::StartsWith(bare, "torch.")) bare.remove_prefix(6);
  for (const DTypeInfo& info : kDTypes) {
    if (bare == info.name || bare == info.long_name ||
        (!info.alias.empty() && bare == info.alias)) {
      return info.dtype;
    }
  }
  std::string accepted;
  for (const DTypeInfo& info : kDTypes) {
    if (!accepted.empty()) absl::StrAppend(&accepted, ", ");
    absl::StrAppend(&accepted, info.name);
    if (info.long_name != info.name) absl::StrAppend(&accepted, " (", info.long_name);
    if (!info.alias.empty()) absl::StrAppend(&accepted, ", ", info.alias);
    if (info.long_name != info.name) absl::StrAppend(&accepted, ")");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("dtype: unknown \"", Abbreviate(name, 64), "\"; accepted: ", accepted));
}

}  // namespace reshard
