// Element-wise arithmetic on host buffers of any DType: the reduction
// functions the Gloo backend hands to Gloo, avg's final division, and the
// f16/bf16 conversions (both round to nearest even).
//
// Reductions of f16/bf16 compute in f32 and round once per pairwise step.
// Integer sums and products wrap (two's complement), as on every engine.
#ifndef RESHARD_COLLECTIVES_TENSOR_HOST_MATH_H_
#define RESHARD_COLLECTIVES_TENSOR_HOST_MATH_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/layout/dtype.h"
#include "planner/layout/placement.h"

namespace reshard {

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

// c[i] = a[i] op b[i] for n elements; c may alias a or b. avg combines as sum.
using HostReduceFn = void (*)(void* c, const void* a, const void* b, size_t n);
// Unimplemented for bool.
absl::StatusOr<HostReduceFn> HostReduceFunction(DType dtype, ReduceOp op);

// x[i] /= divisor (integer division for integer dtypes): avg after a sum.
absl::Status HostDivide(void* x, int64_t count, DType dtype, int64_t divisor);

// Element i of a buffer as a double, and storing a double into it (rounded
// to nearest for floating types, truncated toward zero for integers).
double LoadAsDouble(const void* data, int64_t i, DType dtype);
void StoreFromDouble(double v, void* data, int64_t i, DType dtype);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_TENSOR_HOST_MATH_H_
