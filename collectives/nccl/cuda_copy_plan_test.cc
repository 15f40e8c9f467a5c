// The CUDA calls the NCCL backend's copy engine issues
// (collectives/nccl/cuda_copy_plan.h), checked without a GPU: every call meets
// cudaMemcpy2DAsync/cudaMemset2DAsync's preconditions and stays inside its
// buffers, and carrying the calls out with memcpy/memset on host buffers
// gives exactly what HostCopyEngine gives for the same Copy2D/Fill2D, on
// random slabs of random shapes, for each of the three call shapes
// (one 1-D call, one 2-D call, one 1-D call per row).
#include "collectives/nccl/cuda_copy_plan.h"

#include <cstring>
#include <random>
#include <vector>

#include "collectives/tensor/local_tensor.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 40;

// Host stand-ins for the CUDA calls, with CUDA's preconditions as expectations.
void Emulate(const CudaCopyCall& c, std::vector<char>& dst, const std::vector<char>& src,
             int64_t max_pitch) {
  ASSERT_GT(c.width, 0);
  ASSERT_GE(c.height, 1);
  if (c.kind == CudaCopyCall::Kind::k1D) {
    ASSERT_EQ(c.height, 1);
  } else {
    ASSERT_LE(c.width, c.dst_pitch);
    ASSERT_LE(c.width, c.src_pitch);
    ASSERT_LE(c.dst_pitch, max_pitch);
    ASSERT_LE(c.src_pitch, max_pitch);
  }
  const int64_t dst_pitch = c.kind == CudaCopyCall::Kind::k1D ? 0 : c.dst_pitch;
  const int64_t src_pitch = c.kind == CudaCopyCall::Kind::k1D ? 0 : c.src_pitch;
  ASSERT_LE(c.dst_offset + (c.height - 1) * dst_pitch + c.width, static_cast<int64_t>(dst.size()));
  ASSERT_LE(c.src_offset + (c.height - 1) * src_pitch + c.width, static_cast<int64_t>(src.size()));
  for (int64_t r = 0; r < c.height; ++r) {
    std::memcpy(dst.data() + c.dst_offset + r * dst_pitch,
                src.data() + c.src_offset + r * src_pitch, static_cast<size_t>(c.width));
  }
}

void Emulate(const CudaFillCall& c, std::vector<char>& dst, int64_t max_pitch) {
  ASSERT_GT(c.width, 0);
  ASSERT_GE(c.height, 1);
  if (c.kind == CudaFillCall::Kind::k1D) {
    ASSERT_EQ(c.height, 1);
  } else {
    ASSERT_LE(c.width, c.pitch);
    ASSERT_LE(c.pitch, max_pitch);
  }
  const int64_t pitch = c.kind == CudaFillCall::Kind::k1D ? 0 : c.pitch;
  ASSERT_LE(c.offset + (c.height - 1) * pitch + c.width, static_cast<int64_t>(dst.size()));
  for (int64_t r = 0; r < c.height; ++r) {
    std::memset(dst.data() + c.offset + r * pitch, 0, static_cast<size_t>(c.width));
  }
}

std::vector<char> Pattern(int64_t bytes, int seed) {
  std::vector<char> v(static_cast<size_t>(bytes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>(1 + (i * 7 + seed) % 251);
  return v;
}

Copy2D Strided() {
  // 3 rows of 4 bytes, source rows 10 apart, destination rows 6 apart.
  Copy2D c;
  c.rows = 3;
  c.row_bytes = 4;
  c.src_offset = 2;
  c.src_pitch = 10;
  c.dst_offset = 1;
  c.dst_pitch = 6;
  return c;
}

TEST(PlanCudaCopy, NothingToMoveIsNoCall) {
  Copy2D c = Strided();
  c.rows = 0;
  EXPECT_TRUE(PlanCudaCopy(c, kNoLimit).empty());
  c = Strided();
  c.row_bytes = 0;
  EXPECT_TRUE(PlanCudaCopy(c, kNoLimit).empty());
}

TEST(PlanCudaCopy, BackToBackRowsAreOneMemcpy) {
  Copy2D c = Strided();
  c.src_pitch = c.dst_pitch = c.row_bytes;
  const std::vector<CudaCopyCall> calls = PlanCudaCopy(c, /*max_pitch=*/1);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, CudaCopyCall::Kind::k1D);
  EXPECT_EQ(calls[0].width, 12);
  EXPECT_EQ(calls[0].src_offset, 2);
  EXPECT_EQ(calls[0].dst_offset, 1);
}

TEST(PlanCudaCopy, StridedRowsAreOneMemcpy2DWithTheSameParameters) {
  const std::vector<CudaCopyCall> calls = PlanCudaCopy(Strided(), kNoLimit);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, CudaCopyCall::Kind::k2D);
  EXPECT_EQ(calls[0].width, 4);
  EXPECT_EQ(calls[0].height, 3);
  EXPECT_EQ(calls[0].src_pitch, 10);
  EXPECT_EQ(calls[0].dst_pitch, 6);
  EXPECT_EQ(calls[0].src_offset, 2);
  EXPECT_EQ(calls[0].dst_offset, 1);
}

TEST(PlanCudaCopy, PitchesBeyondTheDeviceLimitBecomeOneMemcpyPerRow) {
  // The source pitch (10) exceeds a limit of 8: cudaMemcpy2DAsync would fail.
  const std::vector<CudaCopyCall> calls = PlanCudaCopy(Strided(), /*max_pitch=*/8);
  ASSERT_EQ(calls.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(calls[r].kind, CudaCopyCall::Kind::k1D);
    EXPECT_EQ(calls[r].width, 4);
    EXPECT_EQ(calls[r].src_offset, 2 + 10 * r);
    EXPECT_EQ(calls[r].dst_offset, 1 + 6 * r);
  }
}

TEST(PlanCudaFill, ShapesOfCalls) {
  Fill2D f;
  f.rows = 3;
  f.row_bytes = 4;
  f.offset = 5;
  f.pitch = 9;
  EXPECT_TRUE(PlanCudaFill(Fill2D{}, kNoLimit).empty());
  std::vector<CudaFillCall> calls = PlanCudaFill(f, kNoLimit);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, CudaFillCall::Kind::k2D);
  EXPECT_EQ(calls[0].pitch, 9);
  EXPECT_EQ(calls[0].height, 3);
  calls = PlanCudaFill(f, /*max_pitch=*/8);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].offset, 5 + 2 * 9);
  f.pitch = f.row_bytes;
  calls = PlanCudaFill(f, /*max_pitch=*/1);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, CudaFillCall::Kind::k1D);
  EXPECT_EQ(calls[0].width, 12);
}

// Random slab copies and fills between random shapes, as the executor makes
// them (SlabCopy/SlabFill), under three pitch limits: none, one that splits
// some strided copies into rows, and 1 byte (every strided copy split).
TEST(PlanCudaCopy, MatchesTheHostEngineOnRandomSlabs) {
  std::mt19937 rng(20240611);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  HostCopyEngine host;
  int strided = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    const int ndim = static_cast<int>(uniform(1, 4));
    const int dim = static_cast<int>(uniform(0, ndim - 1));
    const int itemsize = std::vector<int>{1, 2, 4, 8}[uniform(0, 3)];
    std::vector<int64_t> src_shape(ndim), dst_shape(ndim);
    for (int d = 0; d < ndim; ++d) src_shape[d] = dst_shape[d] = uniform(0, 4);
    src_shape[dim] = uniform(0, 6);
    dst_shape[dim] = uniform(0, 6);
    const int64_t length = uniform(0, std::min(src_shape[dim], dst_shape[dim]));
    const int64_t src_begin = uniform(0, src_shape[dim] - length);
    const int64_t dst_begin = uniform(0, dst_shape[dim] - length);
    absl::StatusOr<Copy2D> copy =
        SlabCopy(src_shape, dst_shape, dim, src_begin, dst_begin, length, itemsize);
    ASSERT_TRUE(copy.ok()) << copy.status();
    absl::StatusOr<Fill2D> fill = SlabFill(dst_shape, dim, dst_begin, length, itemsize);
    ASSERT_TRUE(fill.ok()) << fill.status();
    if (!copy->contiguous()) ++strided;

    const std::vector<char> src = Pattern(NumElements(src_shape) * itemsize, iteration);
    const std::vector<char> dst0 = Pattern(NumElements(dst_shape) * itemsize, iteration + 1);
    std::vector<char> want_copy = dst0, want_fill = dst0;
    ASSERT_TRUE(host.Copy(*copy, want_copy.data(), src.data()).ok());
    ASSERT_TRUE(host.Fill(*fill, want_fill.data()).ok());

    const int64_t mid_limit = std::max<int64_t>(copy->row_bytes, copy->src_pitch);
    for (int64_t max_pitch : {kNoLimit, mid_limit, int64_t{1}}) {
      std::vector<char> got = dst0;
      for (const CudaCopyCall& c : PlanCudaCopy(*copy, max_pitch)) {
        Emulate(c, got, src, max_pitch);
      }
      ASSERT_EQ(got, want_copy) << "copy, iteration " << iteration << ", max_pitch " << max_pitch;
      got = dst0;
      for (const CudaFillCall& c : PlanCudaFill(*fill, max_pitch)) Emulate(c, got, max_pitch);
      ASSERT_EQ(got, want_fill) << "fill, iteration " << iteration << ", max_pitch " << max_pitch;
    }
  }
  // The random cases must exercise the strided paths, not only flat copies.
  EXPECT_GT(strided, 100);
}

}  // namespace
}  // namespace reshard
