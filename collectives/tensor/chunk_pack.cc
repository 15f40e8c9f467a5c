#include "collectives/tensor/chunk_pack.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

// Product of the dims before `dim`: when it is 1, slabs of `dim` are
// contiguous and chunk j of a padded tensor is already where a collective
// wants it.
int64_t Outer(absl::Span<const int64_t> shape, int dim) {
  return NumElements(shape.subspan(0, dim));
}

std::vector<int64_t> With(std::vector<int64_t> shape, int dim, int64_t value) {
  shape[dim] = value;
  return shape;
}

std::vector<int64_t> Prepend(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{n};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace

absl::StatusOr<LocalTensor> WithLength(CopyEngine& engine, LocalTensor t, int dim, int64_t length) {
  if (t.shape()[dim] == length) return t;
  // Trimming a leading dim keeps a prefix of the buffer: no copy (a
  // gather's padded tail is dropped as torch's narrow drops it).
  if (length < t.shape()[dim] && Outer(t.shape(), dim) == 1) {
    RESHARD_RETURN_IF_ERROR(t.Narrow(dim, length));
    return t;
  }
  return Resize(engine, t, dim, length);
}

namespace {

// torch.chunk's n slices of L (spec §2).
std::vector<Slice> TorchChunks(int64_t L, int64_t n) {
  std::vector<Slice> slices;
  for (int64_t j = 0; j < n; ++j) slices.push_back(Slice{ChunkOffset(L, n, j), ChunkSize(L, n, j)});
  return slices;
}

// True when slice j is rows [j * c, (j + 1) * c) of [0, L), cut at L: then
// padding the tail of a tensor to n * c rows is the packed layout.
bool IsPaddedTail(absl::Span<const Slice> slices, int64_t c, int64_t L) {
  for (size_t j = 0; j < slices.size(); ++j) {
    const int64_t begin = static_cast<int64_t>(j) * c;
    const Slice want{std::min(begin, L), std::clamp<int64_t>(L - begin, 0, c)};
    if (!(slices[j] == want)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<LocalTensor> PackChunks(CopyEngine& engine, LocalTensor t, int dim, int64_t n) {
  const int64_t L = t.shape()[dim];
  return PackSlices(engine, std::move(t), dim, TorchChunks(L, n), PaddedChunkSize(L, n));
}

absl::StatusOr<LocalTensor> UnpackChunks(CopyEngine& engine, LocalTensor packed, int dim,
                                         int64_t L) {
  const int64_t n = packed.shape()[0];
  return UnpackSlices(engine, std::move(packed), dim, TorchChunks(L, n), L);
}

absl::StatusOr<LocalTensor> PackSlices(CopyEngine& engine, LocalTensor t, int dim,
                                       absl::Span<const Slice> slices, int64_t c) {
  const int64_t n = static_cast<int64_t>(slices.size());
  const std::vector<int64_t> chunk = With(t.shape(), dim, c);
  if (Outer(t.shape(), dim) == 1 && IsPaddedTail(slices, c, t.shape()[dim])) {
    RESHARD_ASSIGN_OR_RETURN(LocalTensor padded, WithLength(engine, std::move(t), dim, n * c));
    RESHARD_RETURN_IF_ERROR(padded.Reshape(Prepend(n, chunk)));
    return padded;
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(t.dtype(), Prepend(n, chunk)));
  const int item = ItemSize(t.dtype());
  const int64_t chunk_bytes = NumElements(chunk) * item;
  for (int64_t j = 0; j < n; ++j) {
    char* dst = static_cast<char*>(out.data()) + j * chunk_bytes;
    const int64_t size = slices[j].size;
    RESHARD_ASSIGN_OR_RETURN(Copy2D copy,
                             SlabCopy(t.shape(), chunk, dim, slices[j].offset, 0, size, item));
    RESHARD_RETURN_IF_ERROR(engine.Copy(copy, dst, t.data()));
    if (size < c) {
      RESHARD_ASSIGN_OR_RETURN(Fill2D fill, SlabFill(chunk, dim, size, c - size, item));
      RESHARD_RETURN_IF_ERROR(engine.Fill(fill, dst));
    }
  }
  return out;
}

absl::StatusOr<LocalTensor> UnpackSlices(CopyEngine& engine, LocalTensor packed, int dim,
                                         absl::Span<const Slice> slices, int64_t L) {
  const int64_t n = packed.shape()[0];
  const std::vector<int64_t> chunk(packed.shape().begin() + 1, packed.shape().end());
  const int64_t c = chunk[dim];
  if (Outer(chunk, dim) == 1 && IsPaddedTail(slices, c, L)) {
    RESHARD_RETURN_IF_ERROR(packed.Reshape(With(chunk, dim, n * c)));
    return WithLength(engine, std::move(packed), dim, L);
  }
  RESHARD_ASSIGN_OR_RETURN(LocalTensor out, engine.Allocate(packed.dtype(), With(chunk, dim, L)));
  const int item = ItemSize(packed.dtype());
  const int64_t chunk_bytes = NumElements(chunk) * item;
  for (int64_t j = 0; j < n; ++j) {
    const char* src = static_cast<const char*>(packed.data()) + j * chunk_bytes;
    RESHARD_ASSIGN_OR_RETURN(
        Copy2D copy, SlabCopy(chunk, out.shape(), dim, 0, slices[j].offset, slices[j].size, item));
    RESHARD_RETURN_IF_ERROR(engine.Copy(copy, out.data(), src));
  }
  return out;
}

}  // namespace reshard
