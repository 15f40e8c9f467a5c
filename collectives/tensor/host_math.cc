#include "collectives/tensor/host_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_format.h"

namespace reshard {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  const uint32_t bits = exp == 0x1f ? (sign | 0x7f800000u | (mant << 13))
                                    : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {                        // below 2^-14: subnormal half or zero
    float a;
    std::memcpy(&a, &abs, sizeof a);
    // a * 2^24 is exact; nearbyint rounds half to even in the default mode.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t h = (((abs >> 23) - 127 + 15) << 10) | ((abs & 0x7fffffu) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may bump the exponent
  return sign | static_cast<uint16_t>(h);
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

namespace {

// How an element is stored (Bits) and computed (Value).
template <typename T>
struct Native {
  using Bits = T;
  using Value = T;
  static Value Load(Bits b) { return b; }
  static Bits Store(Value v) { return v; }
};
struct Half {
  using Bits = uint16_t;
  using Value = float;
  static Value Load(Bits b) { return HalfToFloat(b); }
  static Bits Store(Value v) { return FloatToHalf(v); }
};
struct BFloat {
  using Bits = uint16_t;
  using Value = float;
  static Value Load(Bits b) { return BFloat16ToFloat(b); }
  static Bits Store(Value v) { return FloatToBFloat16(v); }
};

struct SumOp {
  template <typename V>
  static V Apply(V a, V b) {
    // Integers wrap: compute in the unsigned type of the same width.
    if constexpr (std::is_integral_v<V>) {
      using U = std::make_unsigned_t<V>;
      return static_cast<V>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};
struct ProdOp {
  template <typename V>
  static V Apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      // unsigned int at least, so that small types do not promote to signed int.
      using U = std::common_type_t<std::make_unsigned_t<V>, unsigned>;
      return static_cast<V>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  }
};
struct MaxOp {
  template <typename V>
  static V Apply(V a, V b) {
    return std::max(a, b);
  }
};
struct MinOp {
  template <typename V>
  static V Apply(V a, V b) {
    return std::min(a, b);
  }
};

template <typename Codec, typename Op>
void Reduce(void* c_, const void* a_, const void* b_, size_t n) {
  using Bits = typename Codec::Bits;
  Bits* c = static_cast<Bits*>(c_);
  const Bits* a = static_cast<const Bits*>(a_);
  const Bits* b = static_cast<const Bits*>(b_);
  for (size_t i = 0; i < n; ++i) {
    c[i] = Codec::Store(Op::Apply(Codec::Load(a[i]), Codec::Load(b[i])));
  }
}

template <typename Codec>
HostReduceFn ForOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return &Reduce<Codec, SumOp>;
    case ReduceOp::kProd:
      return &Reduce<Codec, ProdOp>;
    case ReduceOp::kMax:
      return &Reduce<Codec, MaxOp>;
    case ReduceOp::kMin:
      return &Reduce<Codec, MinOp>;
  }
  return nullptr;
}

template <typename Codec>
void Divide(void* x_, int64_t count, int64_t divisor) {
  using Bits = typename Codec::Bits;
  using Value = typename Codec::Value;
  Bits* x = static_cast<Bits*>(x_);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = Codec::Store(static_cast<Value>(Codec::Load(x[i]) / static_cast<Value>(divisor)));
  }
}

// Calls f(Codec{}) for the dtype's codec; false for bool.
template <typename F>
bool Dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF64:
      f(Native<double>{});
      return true;
    case DType::kF32:
      f(Native<float>{});
      return true;
    case DType::kF16:
      f(Half{});
      return true;
    case DType::kBF16:
      f(BFloat{});
      return true;
    case DType::kI64:
      f(Native<int64_t>{});
      return true;
    case DType::kI32:
      f(Native<int32_t>{});
      return true;
    case DType::kI16:
      f(Native<int16_t>{});
      return true;
    case DType::kI8:
      f(Native<int8_t>{});
      return true;
    case DType::kU8:
      f(Native<uint8_t>{});
      return true;
    case DType::kBool:
      return false;
  }
  return false;
}

}  // namespace

absl::StatusOr<HostReduceFn> HostReduceFunction(DType dtype, ReduceOp op) {
  HostReduceFn fn = nullptr;
  if (!Dispatch(dtype, [&](auto codec) { fn = ForOp<decltype(codec)>(op); })) {
    return absl::UnimplementedError(absl::StrFormat("reduce op %s is not supported on dtype %s",
                                                    ReduceOpName(op), DTypeName(dtype)));
  }
  return fn;
}

absl::Status HostDivide(void* x, int64_t count, DType dtype, int64_t divisor) {
  if (divisor < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("divide: divisor %d < 1", divisor));
  }
  if (!Dispatch(dtype, [&](auto codec) { Divide<decltype(codec)>(x, count, divisor); })) {
    return absl::UnimplementedError(
        absl::StrFormat("avg is not supported on dtype %s", DTypeName(dtype)));
  }
  return absl::OkStatus();
}

double LoadAsDouble(const void* data, int64_t i, DType dtype) {
  if (dtype == DType::kBool) return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
  double v = 0;
  Dispatch(dtype, [&](auto codec) {
    using C = decltype(codec);
    v = static_cast<double>(C::Load(static_cast<const typename C::Bits*>(data)[i]));
  });
  return v;
}

void StoreFromDouble(double v, void* data, int64_t i, DType dtype) {
  if (dtype == DType::kBool) {
    static_cast<uint8_t*>(data)[i] = v != 0 ? 1 : 0;
    return;
  }
  Dispatch(dtype, [&](auto codec) {
    using C = decltype(codec);
    using Value = typename C::Value;
    if constexpr (std::is_integral_v<Value>) {
      // Through int64 so that out-of-range values wrap instead of being undefined.
      static_cast<typename C::Bits*>(data)[i] = static_cast<Value>(static_cast<int64_t>(v));
    } else {
      static_cast<typename C::Bits*>(data)[i] = C::Store(static_cast<Value>(v));
    }
  });
}

}  // namespace reshard
