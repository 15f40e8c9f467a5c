#include "harness/ground_truth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/tensor/host_math.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t Hash(uint64_t a, uint64_t b) { return Mix(a ^ Mix(b)); }

bool IsFloat(DType d) {
  return d == DType::kF64 || d == DType::kF32 || d == DType::kF16 || d == DType::kBF16;
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> Strides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// Calls f(local_index, global_index) for every element of a region.
template <typename F>
void ForEachInRegion(const ShardRegion& region, absl::Span<const int64_t> global_shape, F&& f) {
  const int64_t count = NumElements(region.shape);
  if (count == 0) return;
  const std::vector<int64_t> gstrides = Strides(global_shape);
  const int nd = static_cast<int>(region.shape.size());
  std::vector<int64_t> idx(nd, 0);
  for (int64_t local = 0; local < count; ++local) {
    int64_t g = 0;
    for (int d = 0; d < nd; ++d) g += (region.offset[d] + idx[d]) * gstrides[d];
    f(local, g);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < region.shape[d]) break;
      idx[d] = 0;
    }
  }
}

absl::Status CheckGlobal(const LocalTensor& global, const DistSpec& spec) {
  if (global.shape() != spec.global_shape() || global.dtype() != spec.dtype() ||
      global.space() != MemorySpace::kHost) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ground truth: tensor %s does not match the spec (%s[%s]@host)", global.DebugString(),
        DTypeName(spec.dtype()), absl::StrJoin(spec.global_shape(), ",")));
  }
  return absl::OkStatus();
}

// The local value at mesh coordinate `c` (of n) when `v` is split for a
// Partial(op) along mesh dim `m` (see the header). `key` identifies the
// element and the coordinates of the Partial dims split before this one.
double SplitValue(double v, ReduceOp op, DType dtype, int64_t n, int64_t c, uint64_t key,
                  int64_t spread) {
  const int64_t holder = static_cast<int64_t>(Hash(key, 1) % static_cast<uint64_t>(n));
  auto r = [&](int64_t who, int64_t lo, int64_t hi) {  // a small integer in [lo, hi]
    return static_cast<double>(
        lo + static_cast<int64_t>(Hash(key, 100 + who) % static_cast<uint64_t>(hi - lo + 1)));
  };
  const bool fl = IsFloat(dtype);
  switch (op) {
    case ReduceOp::kSum: {
      if (!fl) return c == holder ? v : 0;
      if (c != holder) return r(c, -spread, spread);
      double rest = 0;
      for (int64_t o = 0; o < n; ++o) {
        if (o != holder) rest += r(o, -spread, spread);
      }
      return v - rest;
    }
    case ReduceOp::kAvg: {
      if (!fl) return v;
      if (c != holder) return v + r(c, -spread, spread);
      double rest = 0;
      for (int64_t o = 0; o < n; ++o) {
        if (o != holder) rest += r(o, -spread, spread);
      }
      return v - rest;
    }
    case ReduceOp::kMax:
      if (c == holder) return v;
      // Unsigned values never go below 0 (TestTensor keeps u8 values >= 2).
      return dtype == DType::kU8 && v < 2 ? v : v - r(c, 1, 2);
    case ReduceOp::kMin:
      return c == holder ? v : v + r(c, 1, 2);
    case ReduceOp::kProd:
      return c == holder ? v : 1;
  }
  return v;
}

}  // namespace

ShardRegion RegionOf(const DistSpec& spec, absl::Span<const int64_t> coordinate) {
  ShardRegion region;
  region.shape = spec.global_shape();
  region.offset.assign(region.shape.size(), 0);
  for (int d = 0; d < spec.tensor_ndim(); ++d) {
    for (int m : spec.state().OrderOf(d)) {
      const int64_t n = spec.mesh().size(m);
      region.offset[d] += ChunkOffset(region.shape[d], n, coordinate[m]);
      region.shape[d] = ChunkSize(region.shape[d], n, coordinate[m]);
    }
  }
  return region;
}

absl::StatusOr<LocalTensor> TestTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed,
                                       int64_t num_ranks) {
  RESHARD_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Zeros(dtype, std::move(shape)));
  // Bounds that keep every Partial split and reduction exact (header).
  int64_t lo = -8, hi = 8;
  const int64_t small =
      std::max<int64_t>(1, std::min<int64_t>(8, 60 / std::max<int64_t>(1, num_ranks)));
  if (dtype == DType::kI8) lo = -small, hi = small;
  if (dtype == DType::kU8) lo = 2, hi = 2 + small;
  if (dtype == DType::kBool) lo = 0, hi = 1;
  const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    StoreFromDouble(static_cast<double>(lo + static_cast<int64_t>(Hash(seed, i) % span)), t.data(),
                    i, dtype);
  }
  return t;
}

absl::StatusOr<LocalTensor> ShardOf(const LocalTensor& global, const DistSpec& spec,
                                    absl::Span<const int64_t> coordinate, uint64_t seed) {
  RESHARD_RETURN_IF_ERROR(CheckGlobal(global, spec));
  RESHARD_RETURN_IF_ERROR(spec.mesh().ValidateCoordinate(coordinate));
  const ShardRegion region = RegionOf(spec, coordinate);
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, LocalTensor::Zeros(spec.dtype(), region.shape));
  const int item = ItemSize(spec.dtype());
  std::vector<int> partial_dims;
  for (int m = 0; m < spec.mesh().ndim(); ++m) {
    if (spec.state().placement(m).is_partial()) partial_dims.push_back(m);
  }
  const int64_t spread = spec.mesh().num_ranks() <= 16 ? 2 : 1;
  const char* src = static_cast<const char*>(global.data());
  char* dst = static_cast<char*>(out.data());
  ForEachInRegion(region, spec.global_shape(), [&](int64_t local, int64_t g) {
    if (partial_dims.empty()) {
      std::memcpy(dst + local * item, src + g * item, item);
      return;
    }
    double v = LoadAsDouble(src, g, spec.dtype());
    uint64_t key = Hash(seed, static_cast<uint64_t>(g));
    for (int m : partial_dims) {
      key = Hash(key, static_cast<uint64_t>(m));
      // The key does not depend on the coordinates of the other Partial dims:
      // then values are equal along every avg dim and one holder per element
      // owns each sum dim's value, so the result is exact in whatever order
      // the plan reduces the dims, even with integer avg's truncation.
      v = SplitValue(v, spec.state().placement(m).op(), spec.dtype(), spec.mesh().size(m),
                     coordinate[m], key, spread);
    }
    StoreFromDouble(v, dst, local, spec.dtype());
  });
  return out;
}

namespace {

// Every rank's shard as doubles, after checking it against the spec.
absl::StatusOr<std::vector<std::vector<double>>> LoadShards(absl::Span<const LocalTensor> shards,
                                                            const DistSpec& spec) {
  const DeviceMesh& mesh = spec.mesh();
  if (static_cast<int64_t>(shards.size()) != mesh.num_ranks()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reassemble: %d shards for a mesh of %d ranks", shards.size(), mesh.num_ranks()));
  }
  const DType dtype = spec.dtype();
  std::vector<std::vector<double>> values(shards.size());
  for (size_t r = 0; r < shards.size(); ++r) {
    const std::vector<int64_t> want = spec.LocalShape(mesh.Coordinate(r));
    if (shards[r].shape() != want || shards[r].dtype() != dtype ||
        shards[r].space() != MemorySpace::kHost) {
      return absl::InvalidArgumentError(
          absl::StrFormat("reassemble: rank %d holds %s, the spec gives %s[%s]@host", r,
                          shards[r].DebugString(), DTypeName(dtype), absl::StrJoin(want, ",")));
    }
    values[r].resize(shards[r].numel());
    for (int64_t i = 0; i < shards[r].numel(); ++i) {
      values[r][i] = LoadAsDouble(shards[r].data(), i, dtype);
    }
  }
  return values;
}

// Reduces each Partial mesh dim, in double, into the ranks at coordinate 0
// on it; returns which ranks still hold a value (the others were reduced
// away).
absl::StatusOr<std::vector<bool>> ReducePartials(const DistSpec& spec,
                                                 std::vector<std::vector<double>>& values) {
  const DeviceMesh& mesh = spec.mesh();
  std::vector<bool> live(values.size(), true);
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement p = spec.state().placement(m);
    if (!p.is_partial()) continue;
    RESHARD_ASSIGN_OR_RETURN(const HostReduceFn reduce, HostReduceFunction(DType::kF64, p.op()));
    for (size_t r = 0; r < values.size(); ++r) {
      if (!live[r]) continue;
      if (mesh.Coordinate(r)[m] != 0) {
        live[r] = false;
        continue;
      }
      const std::vector<int64_t> group = mesh.GroupAlong(m, r);
      std::vector<double>& acc = values[r];
      for (size_t k = 1; k < group.size(); ++k) {
        reduce(acc.data(), acc.data(), values[group[k]].data(), acc.size());
      }
      if (p.op() != ReduceOp::kAvg) continue;
      for (double& a : acc) {
        a /= static_cast<double>(group.size());
        if (!IsFloat(spec.dtype())) a = std::trunc(a);
      }
    }
  }
  return live;
}

// The global tensor from the regions of the `live` ranks; replicas must
// agree (FailedPrecondition names the first element where they do not).
absl::StatusOr<LocalTensor> PlaceRegions(const DistSpec& spec,
                                         const std::vector<std::vector<double>>& values,
                                         const std::vector<bool>& live) {
  RESHARD_ASSIGN_OR_RETURN(LocalTensor global,
                           LocalTensor::Zeros(spec.dtype(), spec.global_shape()));
  std::vector<int64_t> owner(global.numel(), -1);
  std::vector<double> placed(global.numel(), 0);
  for (size_t r = 0; r < values.size(); ++r) {
    if (!live[r]) continue;
    const ShardRegion region = RegionOf(spec, spec.mesh().Coordinate(r));
    absl::Status mismatch;
    ForEachInRegion(region, spec.global_shape(), [&](int64_t local, int64_t g) {
      const double v = values[r][local];
      if (owner[g] < 0) {
        owner[g] = static_cast<int64_t>(r);
        placed[g] = v;
      } else if (placed[g] != v && mismatch.ok()) {
        mismatch = absl::FailedPreconditionError(absl::StrFormat(
            "reassemble: replicas disagree at global element %d: rank %d has %g, rank %d has %g", g,
            owner[g], placed[g], r, v));
      }
    });
    RESHARD_RETURN_IF_ERROR(mismatch);
  }
  for (int64_t g = 0; g < global.numel(); ++g) {
    StoreFromDouble(placed[g], global.data(), g, spec.dtype());
  }
  return global;
}

}  // namespace

absl::StatusOr<LocalTensor> Reassemble(absl::Span<const LocalTensor> shards, const DistSpec& spec) {
  RESHARD_ASSIGN_OR_RETURN(std::vector<std::vector<double>> values, LoadShards(shards, spec));
  RESHARD_ASSIGN_OR_RETURN(const std::vector<bool> live, ReducePartials(spec, values));
  return PlaceRegions(spec, values, live);
}

double ReductionTolerance(DType dtype, double scale) {
  const double s = std::max(1.0, std::abs(scale));
  switch (dtype) {
    case DType::kF64:
      return 1e-12 * s;
    case DType::kF32:
      return 1e-5 * s;
    case DType::kF16:
      return 2e-3 * s;
    case DType::kBF16:
      return 1.6e-2 * s;
    default:
      return 0;
  }
}

absl::StatusOr<int64_t> FirstMismatch(const LocalTensor& a, const LocalTensor& b,
                                      double tolerance) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("compare: %s vs %s", a.DebugString(), b.DebugString()));
  }
  const int item = ItemSize(a.dtype());
  const char* pa = static_cast<const char*>(a.data());
  const char* pb = static_cast<const char*>(b.data());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::memcmp(pa + i * item, pb + i * item, item) == 0) continue;
    // Equal as numbers (e.g. -0 and 0) or within the tolerance.
    if (std::abs(LoadAsDouble(pa, i, a.dtype()) - LoadAsDouble(pb, i, a.dtype())) <= tolerance) {
      continue;
    }
    return i;
  }
  return -1;
}

}  // namespace reshard
