#include "collectives/tensor/local_tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"

namespace reshard {

absl::string_view MemorySpaceName(MemorySpace space) {
  return space == MemorySpace::kHost ? "host" : "cuda";
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

LocalTensor::LocalTensor(void* data, Deleter deleter, DType dtype, std::vector<int64_t> shape,
                         MemorySpace space)
    : data_(data, deleter ? std::move(deleter) : Deleter([](void*) {})),
      dtype_(dtype),
      shape_(std::move(shape)),
      space_(space) {}

absl::StatusOr<LocalTensor> LocalTensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  const size_t bytes = static_cast<size_t>(NumElements(shape) * ItemSize(dtype));
  // calloc: zeroed, and malloc alignment suits every dtype.
  void* data = bytes == 0 ? nullptr : std::calloc(bytes, 1);
  if (bytes != 0 && data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("host allocation of %d bytes for a %s tensor [%s] failed", bytes,
                        DTypeName(dtype), absl::StrJoin(shape, ",")));
  }
  return LocalTensor(
      data, [](void* p) { std::free(p); }, dtype, std::move(shape), MemorySpace::kHost);
}

LocalTensor LocalTensor::View(void* data, DType dtype, std::vector<int64_t> shape,
                              MemorySpace space) {
  return LocalTensor(data, nullptr, dtype, std::move(shape), space);
}

LocalTensor LocalTensor::Adopt(void* data, Deleter deleter, DType dtype, std::vector<int64_t> shape,
                               MemorySpace space) {
  return LocalTensor(data, std::move(deleter), dtype, std::move(shape), space);
}

absl::Status LocalTensor::Reshape(std::vector<int64_t> shape) {
  if (NumElements(shape) != numel()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reshape: %s cannot become [%s] (%d elements)", DebugString(),
                        absl::StrJoin(shape, ","), NumElements(shape)));
  }
  shape_ = std::move(shape);
  return absl::OkStatus();
}

absl::Status LocalTensor::Narrow(int dim, int64_t length) {
  if (dim < 0 || dim >= ndim() || length < 0 || length > shape_[dim] ||
      NumElements(absl::MakeConstSpan(shape_).subspan(0, dim)) != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "narrow: %s cannot keep %d entries of dim %d in place", DebugString(), length, dim));
  }
  shape_[dim] = length;
  return absl::OkStatus();
}

std::string LocalTensor::DebugString() const {
  return absl::StrFormat("%s[%s]@%s", DTypeName(dtype_), absl::StrJoin(shape_, ","),
                         MemorySpaceName(space_));
}

namespace {

// Elements per index of `dim` (the product of the dims after it).
int64_t Inner(absl::Span<const int64_t> shape, int dim) {
  return NumElements(shape.subspan(dim + 1));
}

absl::Status CheckDim(absl::Span<const int64_t> shape, int dim) {
  if (dim < 0 || dim >= static_cast<int>(shape.size())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("slab: dim %d out of range for a %d-d tensor", dim, shape.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckRange(absl::string_view what, absl::Span<const int64_t> shape, int dim,
                        int64_t begin, int64_t length) {
  if (begin < 0 || length < 0 || begin + length > shape[dim]) {
    return absl::InvalidArgumentError(
        absl::StrFormat("slab: %s rows [%d, %d) of dim %d do not fit extent %d", what, begin,
                        begin + length, dim, shape[dim]));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Copy2D> SlabCopy(absl::Span<const int64_t> src_shape,
                                absl::Span<const int64_t> dst_shape, int dim, int64_t src_begin,
                                int64_t dst_begin, int64_t length, int itemsize) {
  if (src_shape.size() != dst_shape.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("slab: source has %d dims, destination %d",
                                                      src_shape.size(), dst_shape.size()));
  }
  RESHARD_RETURN_IF_ERROR(CheckDim(src_shape, dim));
  for (size_t i = 0; i < src_shape.size(); ++i) {
    if (static_cast<int>(i) != dim && src_shape[i] != dst_shape[i]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "slab: source [%s] and destination [%s] differ on dim %d (only dim %d may)",
          absl::StrJoin(src_shape, ","), absl::StrJoin(dst_shape, ","), i, dim));
    }
  }
  RESHARD_RETURN_IF_ERROR(CheckRange("source", src_shape, dim, src_begin, length));
  if (absl::Status s = CheckRange("destination", dst_shape, dim, dst_begin, length); !s.ok()) {
    return s;
  }
  const int64_t inner = Inner(src_shape, dim) * itemsize;
  Copy2D c;
  c.rows = NumElements(src_shape.subspan(0, dim));
  c.row_bytes = length * inner;
  c.src_offset = src_begin * inner;
  c.src_pitch = src_shape[dim] * inner;
  c.dst_offset = dst_begin * inner;
  c.dst_pitch = dst_shape[dim] * inner;
  return c;
}

absl::StatusOr<Fill2D> SlabFill(absl::Span<const int64_t> shape, int dim, int64_t begin,
                                int64_t length, int itemsize) {
  RESHARD_RETURN_IF_ERROR(CheckDim(shape, dim));
  RESHARD_RETURN_IF_ERROR(CheckRange("filled", shape, dim, begin, length));
  const int64_t inner = Inner(shape, dim) * itemsize;
  Fill2D f;
  f.rows = NumElements(shape.subspan(0, dim));
  f.row_bytes = length * inner;
  f.offset = begin * inner;
  f.pitch = shape[dim] * inner;
  return f;
}

// Freed buffers by size. Shared with the deleters of the tensors it hands
// out, which find it gone (weak_ptr) when the engine died first.
struct HostCopyEngine::Cache {
  absl::Mutex mu;
  std::multimap<size_t, void*> free ABSL_GUARDED_BY(mu);
  size_t bytes ABSL_GUARDED_BY(mu) = 0;

  ~Cache() {
    for (auto& [size, p] : free) std::free(p);
  }
  void* Take(size_t size) {
    absl::MutexLock lock(&mu);
    auto it = free.find(size);
    if (it == free.end()) return nullptr;
    void* p = it->second;
    free.erase(it);
    bytes -= size;
    return p;
  }
  void Give(void* p, size_t size) {
    {
      absl::MutexLock lock(&mu);
      if (bytes + size <= kMaxCachedBytes) {
        free.emplace(size, p);
        bytes += size;
        return;
      }
    }
    std::free(p);
  }
};

HostCopyEngine::HostCopyEngine() : cache_(std::make_shared<Cache>()) {}
HostCopyEngine::~HostCopyEngine() = default;

size_t HostCopyEngine::cached_bytes() const {
  absl::MutexLock lock(&cache_->mu);
  return cache_->bytes;
}

absl::StatusOr<LocalTensor> HostCopyEngine::Allocate(DType dtype, std::vector<int64_t> shape) {
  const size_t bytes = static_cast<size_t>(NumElements(shape) * ItemSize(dtype));
  void* data = nullptr;
  if (bytes >= kMinCachedBytes) data = cache_->Take(bytes);
  if (data == nullptr && bytes != 0) {
    data = std::malloc(bytes);
    if (data == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("host allocation of %d bytes failed", bytes));
    }
  }
  LocalTensor::Deleter release = [](void* p) { std::free(p); };
  if (bytes >= kMinCachedBytes) {
    release = [weak = std::weak_ptr<Cache>(cache_), bytes](void* p) {
      if (std::shared_ptr<Cache> cache = weak.lock()) {
        cache->Give(p, bytes);
      } else {
        std::free(p);
      }
    };
  }
  return LocalTensor::Adopt(data, std::move(release), dtype, std::move(shape), MemorySpace::kHost);
}

absl::Status HostCopyEngine::Copy(const Copy2D& c, void* dst, const void* src) {
  if (c.rows == 0 || c.row_bytes == 0) return absl::OkStatus();
  char* d = static_cast<char*>(dst) + c.dst_offset;
  const char* s = static_cast<const char*>(src) + c.src_offset;
  if (c.contiguous()) {
    std::memcpy(d, s, static_cast<size_t>(c.rows * c.row_bytes));
    return absl::OkStatus();
  }
  for (int64_t r = 0; r < c.rows; ++r) {
    std::memcpy(d + r * c.dst_pitch, s + r * c.src_pitch, static_cast<size_t>(c.row_bytes));
  }
  return absl::OkStatus();
}

absl::Status HostCopyEngine::Fill(const Fill2D& f, void* dst) {
  if (f.rows == 0 || f.row_bytes == 0) return absl::OkStatus();
  char* d = static_cast<char*>(dst) + f.offset;
  if (f.rows == 1 || f.pitch == f.row_bytes) {
    std::memset(d, 0, static_cast<size_t>(f.rows * f.row_bytes));
    return absl::OkStatus();
  }
  for (int64_t r = 0; r < f.rows; ++r) {
    std::memset(d + r * f.pitch, 0, static_cast<size_t>(f.row_bytes));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckSpace(const CopyEngine& engine, const LocalTensor& t) {
  if (t.space() != engine.space()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor %s is not in the copy engine's memory space (%s)", t.DebugString(),
                        MemorySpaceName(engine.space())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LocalTensor> TakeSlab(CopyEngine& engine, const LocalTensor& src, int dim,
                                     int64_t begin, int64_t length) {
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, src));
  RESHARD_RETURN_IF_ERROR(CheckDim(src.shape(), dim));
  std::vector<int64_t> shape = src.shape();
  shape[dim] = length;
  absl::StatusOr<Copy2D> copy =
      SlabCopy(src.shape(), shape, dim, begin, 0, length, ItemSize(src.dtype()));
  if (!copy.ok()) return copy.status();
  absl::StatusOr<LocalTensor> out = engine.Allocate(src.dtype(), std::move(shape));
  if (!out.ok()) return out.status();
  RESHARD_RETURN_IF_ERROR(engine.Copy(*copy, out->data(), src.data()));
  return out;
}

absl::Status PlaceSlab(CopyEngine& engine, const LocalTensor& src, LocalTensor& dst, int dim,
                       int64_t dst_begin) {
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, src));
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, dst));
  if (src.dtype() != dst.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("slab: source %s and destination %s differ in dtype", src.DebugString(),
                        dst.DebugString()));
  }
  RESHARD_RETURN_IF_ERROR(CheckDim(src.shape(), dim));
  absl::StatusOr<Copy2D> copy = SlabCopy(src.shape(), dst.shape(), dim, 0, dst_begin,
                                         src.shape()[dim], ItemSize(src.dtype()));
  if (!copy.ok()) return copy.status();
  return engine.Copy(*copy, dst.data(), src.data());
}

absl::StatusOr<LocalTensor> Resize(CopyEngine& engine, const LocalTensor& src, int dim,
                                   int64_t new_length) {
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, src));
  RESHARD_RETURN_IF_ERROR(CheckDim(src.shape(), dim));
  if (new_length < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("resize: negative length %d", new_length));
  }
  std::vector<int64_t> shape = src.shape();
  shape[dim] = new_length;
  const int64_t kept = std::min(new_length, src.shape()[dim]);
  const int itemsize = ItemSize(src.dtype());
  absl::StatusOr<Copy2D> copy = SlabCopy(src.shape(), shape, dim, 0, 0, kept, itemsize);
  if (!copy.ok()) return copy.status();
  absl::StatusOr<Fill2D> fill = SlabFill(shape, dim, kept, new_length - kept, itemsize);
  if (!fill.ok()) return fill.status();
  absl::StatusOr<LocalTensor> out = engine.Allocate(src.dtype(), std::move(shape));
  if (!out.ok()) return out.status();
  RESHARD_RETURN_IF_ERROR(engine.Copy(*copy, out->data(), src.data()));
  RESHARD_RETURN_IF_ERROR(engine.Fill(*fill, out->data()));
  return out;
}

absl::StatusOr<LocalTensor> CopyOf(CopyEngine& engine, const LocalTensor& src) {
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, src));
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(src.dtype(), src.shape()));
  Copy2D all;
  all.rows = 1;
  all.row_bytes = all.src_pitch = all.dst_pitch = src.nbytes();
  RESHARD_RETURN_IF_ERROR(engine.Copy(all, out.data(), src.data()));
  return out;
}

absl::Status ZeroSlab(CopyEngine& engine, LocalTensor& t, int dim, int64_t begin, int64_t length) {
  RESHARD_RETURN_IF_ERROR(CheckSpace(engine, t));
  absl::StatusOr<Fill2D> fill = SlabFill(t.shape(), dim, begin, length, ItemSize(t.dtype()));
  if (!fill.ok()) return fill.status();
  return engine.Fill(*fill, t.data());
}

}  // namespace reshard
