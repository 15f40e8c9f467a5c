// LocalTensor and its slab copies: the Copy2D/Fill2D parameters (shared with
// the CUDA engine), and TakeSlab/PlaceSlab/Resize/ZeroSlab on the host for
// uneven and zero-size slabs, checked element by element against indexing.
#include "collectives/tensor/local_tensor.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

// The allocation test below asks for more memory than any machine has; under
// AddressSanitizer that must fail like malloc does instead of aborting.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace reshard {
namespace {

// Issue 9, item 3: a failed allocation is ResourceExhausted naming the size,
// not a null buffer that a later copy writes through.
TEST(LocalTensorTest, ZerosReportsAFailedAllocation) {
  absl::StatusOr<LocalTensor> huge = LocalTensor::Zeros(DType::kF64, {int64_t{1} << 40});  // 8 TiB
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  EXPECT_NE(huge.status().message().find("8796093022208 bytes"), absl::string_view::npos)
      << huge.status();
  absl::StatusOr<LocalTensor> empty = LocalTensor::Zeros(DType::kF32, {0, 5});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->numel(), 0);
}

// t[i, j, k] = 100 * i + 10 * j + k for a 3-d int32 tensor.
LocalTensor Iota3(int64_t a, int64_t b, int64_t c) {
  LocalTensor t = *LocalTensor::Zeros(DType::kI32, {a, b, c});
  int32_t* p = t.data_as<int32_t>();
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        p[(i * b + j) * c + k] = static_cast<int32_t>(100 * i + 10 * j + k);
  return t;
}

int32_t At(const LocalTensor& t, int64_t i, int64_t j, int64_t k) {
  return t.data_as<int32_t>()[(i * t.shape()[1] + j) * t.shape()[2] + k];
}

TEST(SlabCopyTest, ParametersForEachDim) {
  // Shape [2, 5, 3] of 4-byte items; slab rows [1, 3) of dim 1 into a [2, 4, 3] tensor at 2.
  absl::StatusOr<Copy2D> c = SlabCopy({2, 5, 3}, {2, 4, 3}, 1, 1, 2, 2, 4);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rows, 2);               // one row per index of dim 0
  EXPECT_EQ(c->row_bytes, 2 * 3 * 4);  // 2 rows of dim 1, each 3 items
  EXPECT_EQ(c->src_offset, 1 * 3 * 4);
  EXPECT_EQ(c->src_pitch, 5 * 3 * 4);
  EXPECT_EQ(c->dst_offset, 2 * 3 * 4);
  EXPECT_EQ(c->dst_pitch, 4 * 3 * 4);
  EXPECT_FALSE(c->contiguous());

  // Dim 0 of anything is one contiguous block.
  c = SlabCopy({6, 7}, {3, 7}, 0, 3, 0, 3, 8);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rows, 1);
  EXPECT_EQ(c->row_bytes, 3 * 7 * 8);
  EXPECT_EQ(c->src_offset, 3 * 7 * 8);
  EXPECT_TRUE(c->contiguous());

  // Last dim: a row per outer index of one element run each.
  c = SlabCopy({2, 3, 4}, {2, 3, 1}, 2, 3, 0, 1, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rows, 6);
  EXPECT_EQ(c->row_bytes, 2);
  EXPECT_EQ(c->src_pitch, 8);
  EXPECT_EQ(c->dst_pitch, 2);

  absl::StatusOr<Fill2D> f = SlabFill({2, 5, 3}, 1, 4, 1, 4);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->rows, 2);
  EXPECT_EQ(f->row_bytes, 12);
  EXPECT_EQ(f->offset, 48);
  EXPECT_EQ(f->pitch, 60);
}

TEST(SlabCopyTest, EmptySlabsAreNoOps) {
  absl::StatusOr<Copy2D> c = SlabCopy({4, 0, 3}, {4, 0, 3}, 2, 0, 0, 3, 4);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->row_bytes * c->rows, 0);
  c = SlabCopy({4, 3}, {0, 3}, 0, 4, 0, 0, 4);  // zero rows at the very end
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->row_bytes, 0);
}

TEST(SlabCopyTest, RejectsBadArguments) {
  EXPECT_EQ(SlabCopy({4, 3}, {4, 2}, 0, 0, 0, 1, 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // differ off the slab dim
  EXPECT_EQ(SlabCopy({4, 3}, {4, 3}, 2, 0, 0, 1, 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // dim out of range
  EXPECT_EQ(SlabCopy({4, 3}, {4, 3}, 0, 3, 0, 2, 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // past the source's end
  EXPECT_EQ(SlabCopy({4, 3}, {2, 3}, 0, 0, 1, 2, 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // past the destination's end
  EXPECT_EQ(SlabFill({4}, 0, -1, 1, 4).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalTensorTest, TakeSlabOnEveryDimIncludingEmpty) {
  HostCopyEngine engine;
  const LocalTensor t = Iota3(3, 5, 4);
  for (int dim = 0; dim < 3; ++dim) {
    const int64_t extent = t.shape()[dim];
    for (int64_t begin = 0; begin <= extent; ++begin) {
      for (int64_t len = 0; begin + len <= extent; ++len) {
        absl::StatusOr<LocalTensor> s = TakeSlab(engine, t, dim, begin, len);
        ASSERT_TRUE(s.ok()) << s.status();
        ASSERT_EQ(s->shape()[dim], len);
        for (int64_t i = 0; i < s->shape()[0]; ++i)
          for (int64_t j = 0; j < s->shape()[1]; ++j)
            for (int64_t k = 0; k < s->shape()[2]; ++k) {
              int64_t idx[3] = {i, j, k};
              idx[dim] += begin;
              ASSERT_EQ(At(*s, i, j, k), At(t, idx[0], idx[1], idx[2]));
            }
      }
    }
  }
}

TEST(LocalTensorTest, ResizePadsWithZerosAndTrims) {
  HostCopyEngine engine;
  const LocalTensor t = Iota3(2, 3, 5);
  absl::StatusOr<LocalTensor> padded = Resize(engine, t, 1, 7);
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->shape(), (std::vector<int64_t>{2, 7, 5}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 7; ++j)
      for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(At(*padded, i, j, k), j < 3 ? At(t, i, j, k) : 0);
  absl::StatusOr<LocalTensor> trimmed = Resize(engine, *padded, 2, 2);
  ASSERT_TRUE(trimmed.ok());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(At(*trimmed, i, j, k), At(t, i, j, k));
  // From and to empty.
  absl::StatusOr<LocalTensor> empty = Resize(engine, t, 0, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
  absl::StatusOr<LocalTensor> zeros = Resize(engine, *empty, 0, 2);
  ASSERT_TRUE(zeros.ok());
  for (int64_t i = 0; i < zeros->numel(); ++i) EXPECT_EQ(zeros->data_as<int32_t>()[i], 0);
  EXPECT_EQ(Resize(engine, t, 0, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalTensorTest, CopyOfIsADistinctTensorFromTheEngineCache) {
  HostCopyEngine engine;
  const LocalTensor t = Iota3(2, 3, 5);
  absl::StatusOr<LocalTensor> copy = CopyOf(engine, t);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->shape(), t.shape());
  EXPECT_EQ(copy->dtype(), t.dtype());
  EXPECT_NE(copy->data(), t.data());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(At(*copy, i, j, k), At(t, i, j, k));
  // A buffer of a cached size comes back for the next copy (reshard bench's
  // rounds rely on it: no fresh memory per round).
  absl::StatusOr<LocalTensor> big =
      LocalTensor::Zeros(DType::kF32, {int64_t{HostCopyEngine::kMinCachedBytes / 4}});
  ASSERT_TRUE(big.ok());
  const void* first = nullptr;
  {
    absl::StatusOr<LocalTensor> a = CopyOf(engine, *big);
    ASSERT_TRUE(a.ok());
    first = a->data();
  }
  EXPECT_EQ(engine.cached_bytes(), HostCopyEngine::kMinCachedBytes);
  absl::StatusOr<LocalTensor> b = CopyOf(engine, *big);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(engine.cached_bytes(), 0u);
  absl::StatusOr<LocalTensor> empty = LocalTensor::Zeros(DType::kF32, {0, 4});
  ASSERT_TRUE(empty.ok());
  absl::StatusOr<LocalTensor> empty_copy = CopyOf(engine, *empty);
  ASSERT_TRUE(empty_copy.ok());
  EXPECT_EQ(empty_copy->shape(), (std::vector<int64_t>{0, 4}));
}

TEST(LocalTensorTest, PlaceSlabsReassembleChunks) {
  // Split dim 1 (extent 7) torch.chunk-style into 3, 3, 1 and place them back.
  HostCopyEngine engine;
  const LocalTensor t = Iota3(2, 7, 3);
  LocalTensor back = *LocalTensor::Zeros(DType::kI32, {2, 7, 3});
  const int64_t starts[] = {0, 3, 6}, lens[] = {3, 3, 1};
  for (int c = 0; c < 3; ++c) {
    absl::StatusOr<LocalTensor> chunk = TakeSlab(engine, t, 1, starts[c], lens[c]);
    ASSERT_TRUE(chunk.ok());
    ASSERT_TRUE(PlaceSlab(engine, *chunk, back, 1, starts[c]).ok());
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_EQ(back.data_as<int32_t>()[i], t.data_as<int32_t>()[i]);
  LocalTensor f = *LocalTensor::Zeros(DType::kF32, {2, 7, 3});
  EXPECT_EQ(PlaceSlab(engine, t, f, 1, 0).code(), absl::StatusCode::kInvalidArgument);  // dtype
}

TEST(LocalTensorTest, ZeroSlabAndReshape) {
  HostCopyEngine engine;
  LocalTensor t = Iota3(2, 4, 3);
  ASSERT_TRUE(ZeroSlab(engine, t, 1, 1, 2).ok());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(At(t, i, j, k), (j == 1 || j == 2) ? 0 : 100 * i + 10 * j + k);
  EXPECT_TRUE(t.Reshape({8, 3}).ok());
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(t.Reshape({5, 5}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalTensorTest, NarrowKeepsAPrefixInPlace) {
  LocalTensor t = Iota3(1, 4, 3);
  const void* buffer = t.data();
  ASSERT_TRUE(t.Narrow(1, 2).ok());
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(t.data(), buffer);
  for (int64_t j = 0; j < 2; ++j)
    for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(At(t, 0, j, k), 10 * j + k);
  EXPECT_EQ(t.Narrow(1, 3).code(), absl::StatusCode::kInvalidArgument);  // longer
  LocalTensor u = Iota3(2, 4, 3);
  EXPECT_EQ(u.Narrow(1, 2).code(), absl::StatusCode::kInvalidArgument);  // not a prefix
  EXPECT_EQ(u.Narrow(3, 1).code(), absl::StatusCode::kInvalidArgument);  // no such dim
  EXPECT_TRUE(u.Narrow(0, 1).ok());
}

TEST(LocalTensorTest, ViewsAndSpaces) {
  float buf[6] = {1, 2, 3, 4, 5, 6};
  LocalTensor v = LocalTensor::View(buf, DType::kF32, {2, 3}, MemorySpace::kHost);
  EXPECT_EQ(v.data(), buf);
  EXPECT_EQ(v.nbytes(), 24);
  EXPECT_EQ(v.DebugString(), "f32[2,3]@host");
  HostCopyEngine engine;
  LocalTensor cuda = LocalTensor::View(buf, DType::kF32, {2, 3}, MemorySpace::kCuda);
  // The host engine refuses device tensors rather than dereferencing them.
  EXPECT_EQ(TakeSlab(engine, cuda, 0, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  bool freed = false;
  {
    LocalTensor owned = LocalTensor::Adopt(
        new float[2],
        [&](void* p) {
          freed = true;
          delete[] static_cast<float*>(p);
        },
        DType::kF32, {2}, MemorySpace::kHost);
    LocalTensor moved = std::move(owned);
    EXPECT_FALSE(freed);
  }
  EXPECT_TRUE(freed);
}

TEST(HostCopyEngineTest, ReusesFreedLargeBuffers) {
  HostCopyEngine engine;
  const std::vector<int64_t> big = {static_cast<int64_t>(HostCopyEngine::kMinCachedBytes / 4)};
  void* first = nullptr;
  {
    absl::StatusOr<LocalTensor> t = engine.Allocate(DType::kF32, big);
    ASSERT_TRUE(t.ok());
    first = t->data();
    EXPECT_EQ(engine.cached_bytes(), 0u);
  }
  EXPECT_EQ(engine.cached_bytes(), HostCopyEngine::kMinCachedBytes);
  absl::StatusOr<LocalTensor> again = engine.Allocate(DType::kF32, big);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);  // the same size comes back from the cache
  EXPECT_EQ(engine.cached_bytes(), 0u);
  // Small buffers are not cached.
  { absl::StatusOr<LocalTensor> small = engine.Allocate(DType::kF32, {16}); }
  EXPECT_EQ(engine.cached_bytes(), 0u);
}

TEST(HostCopyEngineTest, TensorsMayOutliveTheEngine) {
  absl::StatusOr<LocalTensor> t;
  {
    HostCopyEngine engine;
    t = engine.Allocate(DType::kU8, {static_cast<int64_t>(HostCopyEngine::kMinCachedBytes)});
    ASSERT_TRUE(t.ok());
  }
  static_cast<uint8_t*>(t->data())[0] = 1;  // still ours; freed (not cached) when t dies
  EXPECT_EQ(t->nbytes(), static_cast<int64_t>(HostCopyEngine::kMinCachedBytes));
}

}  // namespace
}  // namespace reshard
