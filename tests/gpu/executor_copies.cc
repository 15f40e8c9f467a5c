#include "tests/gpu/executor_copies.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "planner/layout/chunk.h"

namespace reshard {

absl::StatusOr<LocalTensor> ChunksPlacedBack(CopyEngine& e, const LocalTensor& t, int dim,
                                             int64_t n) {
  const int64_t L = t.shape()[dim];
  absl::StatusOr<LocalTensor> out = e.Allocate(t.dtype(), t.shape());
  if (!out.ok()) return out.status();
  if (absl::Status s = ZeroSlab(e, *out, dim, 0, L); !s.ok()) return s;
  for (int64_t j = 0; j < n; ++j) {
    absl::StatusOr<LocalTensor> piece =
        TakeSlab(e, t, dim, ChunkOffset(L, n, j), ChunkSize(L, n, j));
    if (!piece.ok()) return piece.status();
    if (absl::Status s = PlaceSlab(e, *piece, *out, dim, ChunkOffset(L, n, j)); !s.ok()) return s;
  }
  return out;
}

std::vector<NamedCopyOp> ExecutorCopyOps(int dim, int64_t L) {
  std::vector<NamedCopyOp> ops;
  ops.push_back(
      {"pad by 3", [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, L + 3); }});
  if (L > 0) {
    ops.push_back({"trim by 1",
                   [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, L - 1); }});
    ops.push_back(
        {"trim to 0", [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, 0); }});
  }
  for (int64_t n = 1; n <= 5; ++n) {
    for (int64_t j = 0; j < n; ++j) {
      ops.push_back(
          {absl::StrCat("take chunk ", j, " of ", n), [=](CopyEngine& e, const LocalTensor& t) {
             return TakeSlab(e, t, dim, ChunkOffset(L, n, j), ChunkSize(L, n, j));
           }});
    }
    ops.push_back(
        {absl::StrCat("place ", n, " chunks back"),
         [=](CopyEngine& e, const LocalTensor& t) { return ChunksPlacedBack(e, t, dim, n); }});
    ops.push_back({absl::StrCat("pack ", n, " padded chunks"),
                   [=](CopyEngine& e, const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
                     absl::StatusOr<LocalTensor> copy = TakeSlab(e, t, dim, 0, L);
                     if (!copy.ok()) return copy.status();
                     return PackChunks(e, *std::move(copy), dim, n);
                   }});
    ops.push_back({absl::StrCat("pack and unpack ", n, " chunks"),
                   [=](CopyEngine& e, const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
                     absl::StatusOr<LocalTensor> copy = TakeSlab(e, t, dim, 0, L);
                     if (!copy.ok()) return copy.status();
                     absl::StatusOr<LocalTensor> packed = PackChunks(e, *std::move(copy), dim, n);
                     if (!packed.ok()) return packed.status();
                     return UnpackChunks(e, *std::move(packed), dim, L);
                   }});
  }
  ops.push_back({"zero the middle third",
                 [=](CopyEngine& e, const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
                   absl::StatusOr<LocalTensor> copy = TakeSlab(e, t, dim, 0, L);
                   if (!copy.ok()) return copy.status();
                   if (absl::Status s =
                           ZeroSlab(e, *copy, dim, ChunkOffset(L, 3, 1), ChunkSize(L, 3, 1));
                       !s.ok()) {
                     return s;
                   }
                   return copy;
                 }});
  return ops;
}

LocalTensor PatternTensor(DType dtype, std::vector<int64_t> shape, int seed) {
  LocalTensor t = *LocalTensor::Zeros(dtype, std::move(shape));
  unsigned char* bytes = t.data_as<unsigned char>();
  for (int64_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = static_cast<unsigned char>(1 + (i * 37 + seed * 101) % 251);
  }
  return t;
}

bool SameBytes(const LocalTensor& a, const LocalTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())) == 0);
}

}  // namespace reshard
