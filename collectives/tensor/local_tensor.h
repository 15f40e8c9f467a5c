// LocalTensor: one rank's shard as a contiguous row-major buffer, and the
// strided copies the executor builds every step from (spec §11: taking or
// placing a chunk along a dim, padding, trimming).
//
// Every such copy is a "slab" along one tensor dim d: for a row-major tensor
// of shape [outer..., D, inner...], rows [begin, begin + length) of dim d are
// `outer` rows of `length * inner * itemsize` contiguous bytes, one per outer
// index. So a slab copy is exactly one 2-D copy (Copy2D, the parameters of
// cudaMemcpy2DAsync) and a slab fill one 2-D memset (Fill2D, the parameters of
// cudaMemset2DAsync). The parameters come from GPU-free functions (SlabCopy,
// SlabFill) that every memory space shares; a CopyEngine carries them out.
//
//   HostCopyEngine engine;
//   LocalTensor t = *LocalTensor::Zeros(DType::kF32, {5, 3});
//   absl::StatusOr<LocalTensor> top = TakeSlab(engine, t, /*dim=*/0, /*begin=*/0, /*length=*/2);
//   absl::StatusOr<LocalTensor> padded = Resize(engine, t, /*dim=*/0, /*new_length=*/8);  //
//   zero-filled
#ifndef RESHARD_COLLECTIVES_TENSOR_LOCAL_TENSOR_H_
#define RESHARD_COLLECTIVES_TENSOR_LOCAL_TENSOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/layout/dtype.h"

namespace reshard {

// Where a buffer lives. Collectives and copies require every buffer of one
// call to be in the communicator's memory space.
enum class MemorySpace : uint8_t { kHost, kCuda };
absl::string_view MemorySpaceName(MemorySpace space);  // "host", "cuda"

// Product of the dims (1 for a 0-d shape); shapes here are small and validated.
int64_t NumElements(absl::Span<const int64_t> shape);

// A contiguous row-major tensor. Move-only: it either owns its buffer (freed
// by the deleter it was made with) or views memory owned by the caller.
// Invariant: data() points to NumElements(shape) * ItemSize(dtype) bytes in
// space() (data() may be null when that is 0).
class LocalTensor {
 public:
  using Deleter = std::function<void(void*)>;

  // An empty f32 host tensor of shape {0}.
  LocalTensor() : LocalTensor(nullptr, nullptr, DType::kF32, {0}, MemorySpace::kHost) {}

  // A zero-filled host tensor; ResourceExhausted when the memory cannot be had.
  static absl::StatusOr<LocalTensor> Zeros(DType dtype, std::vector<int64_t> shape);
  // Wraps a caller-owned buffer (host or device); the caller keeps it alive.
  static LocalTensor View(void* data, DType dtype, std::vector<int64_t> shape, MemorySpace space);
  // Takes ownership of `data`, released with `deleter` (e.g. cudaFree).
  static LocalTensor Adopt(void* data, Deleter deleter, DType dtype, std::vector<int64_t> shape,
                           MemorySpace space);

  LocalTensor(LocalTensor&&) = default;
  LocalTensor& operator=(LocalTensor&&) = default;
  LocalTensor(const LocalTensor&) = delete;
  LocalTensor& operator=(const LocalTensor&) = delete;

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* data_as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data());
  }

  DType dtype() const { return dtype_; }
  MemorySpace space() const { return space_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return NumElements(shape_); }
  int64_t nbytes() const { return numel() * ItemSize(dtype_); }

  // Reinterprets the buffer with another shape of as many elements
  // (InvalidArgument otherwise); the data is untouched.
  absl::Status Reshape(std::vector<int64_t> shape);
  // Keeps the first `length` entries of `dim` in place, where every dim
  // before `dim` has size 1 so that they are a prefix of the buffer (as
  // torch's narrow of a padded tensor): the buffer stays whole, the shape
  // shrinks. InvalidArgument when `length` exceeds the extent or `dim` is
  // not leading.
  absl::Status Narrow(int dim, int64_t length);

  // "f32[5,3]@host".
  std::string DebugString() const;

 private:
  LocalTensor(void* data, Deleter deleter, DType dtype, std::vector<int64_t> shape,
              MemorySpace space);

  std::shared_ptr<void> data_;  // shared_ptr for its type-erased deleter; never shared
  DType dtype_;
  std::vector<int64_t> shape_;
  MemorySpace space_;
};

// A 2-D copy: `rows` rows of `row_bytes` bytes; row r is read at
// src + src_offset + r * src_pitch and written at dst + dst_offset + r * dst_pitch.
// On CUDA: cudaMemcpy2DAsync(dst + dst_offset, dst_pitch, src + src_offset,
// src_pitch, row_bytes, rows, kind, stream). All fields are >= 0 and
// pitches >= row_bytes; rows == 0 or row_bytes == 0 is a no-op.
struct Copy2D {
  int64_t rows = 0;
  int64_t row_bytes = 0;
  int64_t src_offset = 0;
  int64_t src_pitch = 0;
  int64_t dst_offset = 0;
  int64_t dst_pitch = 0;
  // True when the rows are back to back in both buffers (one memcpy).
  bool contiguous() const {
    return rows <= 1 || (src_pitch == row_bytes && dst_pitch == row_bytes);
  }
};

// A 2-D zero fill: `rows` rows of `row_bytes` at dst + offset + r * pitch.
// On CUDA: cudaMemset2DAsync(dst + offset, pitch, 0, row_bytes, rows, stream).
struct Fill2D {
  int64_t rows = 0;
  int64_t row_bytes = 0;
  int64_t offset = 0;
  int64_t pitch = 0;
};

// The copy of slab [src_begin, src_begin + length) of dim `dim` of a tensor
// of `src_shape` into slab [dst_begin, dst_begin + length) of a tensor of
// `dst_shape`. The shapes must agree on every dim but `dim`; InvalidArgument
// (naming the bad argument) otherwise or when a slab is out of range.
absl::StatusOr<Copy2D> SlabCopy(absl::Span<const int64_t> src_shape,
                                absl::Span<const int64_t> dst_shape, int dim, int64_t src_begin,
                                int64_t dst_begin, int64_t length, int itemsize);
// The zero fill of slab [begin, begin + length) of dim `dim`.
absl::StatusOr<Fill2D> SlabFill(absl::Span<const int64_t> shape, int dim, int64_t begin,
                                int64_t length, int itemsize);

// Carries out copies, fills and allocations in one memory space. The CUDA
// engine (collectives/nccl_*) enqueues them on its stream; callers must not
// assume completion before the next collective on the same engine's stream.
class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  virtual MemorySpace space() const = 0;
  // An uninitialised tensor in space().
  virtual absl::StatusOr<LocalTensor> Allocate(DType dtype, std::vector<int64_t> shape) = 0;
  virtual absl::Status Copy(const Copy2D& copy, void* dst, const void* src) = 0;
  virtual absl::Status Fill(const Fill2D& fill, void* dst) = 0;
};

// Host memory: memcpy/memset. Thread-safe.
//
// Allocate caches freed buffers of kMinCachedBytes or more (up to
// kMaxCachedBytes in all) and hands them out again for the same size, as
// PyTorch's caching allocators do: a plan run over and over then stops
// page-faulting fresh memory on every step. Tensors may outlive the engine
// (their buffers are then simply freed).
class HostCopyEngine final : public CopyEngine {
 public:
  static constexpr size_t kMinCachedBytes = size_t{256} << 10;
  static constexpr size_t kMaxCachedBytes = size_t{512} << 20;

  HostCopyEngine();
  ~HostCopyEngine() override;
  HostCopyEngine(const HostCopyEngine&) = delete;
  HostCopyEngine& operator=(const HostCopyEngine&) = delete;

  MemorySpace space() const override { return MemorySpace::kHost; }
  absl::StatusOr<LocalTensor> Allocate(DType dtype, std::vector<int64_t> shape) override;
  absl::Status Copy(const Copy2D& copy, void* dst, const void* src) override;
  absl::Status Fill(const Fill2D& fill, void* dst) override;

  // Bytes of freed buffers held for reuse.
  size_t cached_bytes() const;

 private:
  struct Cache;
  std::shared_ptr<Cache> cache_;
};

// Slab helpers built on SlabCopy/SlabFill. The tensors must be in
// engine.space(); every result is a new tensor from engine.Allocate.

// A new tensor holding slab [begin, begin + length) of `dim` (taking a chunk).
absl::StatusOr<LocalTensor> TakeSlab(CopyEngine& engine, const LocalTensor& src, int dim,
                                     int64_t begin, int64_t length);
// Copies all of `src` into `dst` at offset `dst_begin` of `dim` (placing a
// chunk); shapes must agree elsewhere.
absl::Status PlaceSlab(CopyEngine& engine, const LocalTensor& src, LocalTensor& dst, int dim,
                       int64_t dst_begin);
// A new tensor whose `dim` has `new_length`: the leading min(old, new) rows
// are copied, the rest zero-filled (padding when growing, trimming when
// shrinking).
absl::StatusOr<LocalTensor> Resize(CopyEngine& engine, const LocalTensor& src, int dim,
                                   int64_t new_length);
// A new tensor with src's dtype, shape and data (one contiguous copy).
absl::StatusOr<LocalTensor> CopyOf(CopyEngine& engine, const LocalTensor& src);
// Zero-fills slab [begin, begin + length) of `dim` in place.
absl::Status ZeroSlab(CopyEngine& engine, LocalTensor& t, int dim, int64_t begin, int64_t length);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_TENSOR_LOCAL_TENSOR_H_
