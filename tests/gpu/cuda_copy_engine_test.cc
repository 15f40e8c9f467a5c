// The CUDA copy engine against the host engine (the reference): every pad,
// trim, chunk, place, zero fill and chunk packing the executor does
// (collectives/executor.cc, spec §11), on uneven and empty shards, for every
// dtype, gives the same bytes on the GPU as on the host; its strided copy
// kernel writes what cudaMemcpy2DAsync writes. And a bad pointer is an error
// Status, after which the engine still works.
#include "collectives/nccl/cuda_copy_engine.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectives/nccl/strided_copy.h"
#include "collectives/tensor/local_tensor.h"
#include "gtest/gtest.h"
#include "planner/layout/chunk.h"
#include "tests/gpu/cuda_test_util.h"
#include "tests/gpu/executor_copies.h"

namespace reshard {
namespace {

class CudaCopyEngineTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stream_.creation_status().ok()) << stream_.creation_status();
    absl::StatusOr<CudaCopyEngine> engine = CudaCopyEngine::Create(stream_.get());
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_.emplace(*engine);
  }

  TestStream stream_;
  absl::optional<CudaCopyEngine> engine_;
  HostCopyEngine host_;
};

TEST_F(CudaCopyEngineTest, EveryExecutorCopyMatchesTheHostEngineInEveryDtype) {
  const std::vector<std::vector<int64_t>> shapes = {
      {13}, {0}, {1}, {13, 5}, {5, 13}, {2, 1}, {4, 0, 3}, {3, 7, 4}, {2, 3, 5, 2}};
  int checked = 0;
  for (DType dtype : kEveryDType) {
    for (const std::vector<int64_t>& shape : shapes) {
      const LocalTensor host_in = PatternTensor(dtype, shape, static_cast<int>(dtype));
      absl::StatusOr<LocalTensor> device_in = ToDevice(*engine_, host_in);
      ASSERT_TRUE(device_in.ok()) << device_in.status();
      for (int dim = 0; dim < static_cast<int>(shape.size()); ++dim) {
        for (const NamedCopyOp& op : ExecutorCopyOps(dim, shape[dim])) {
          const std::string what =
              absl::StrCat(op.name, " along dim ", dim, " of ", DTypeName(dtype), "[",
                           absl::StrJoin(shape, ","), "]");
          absl::StatusOr<LocalTensor> want = op.op(host_, host_in);
          ASSERT_TRUE(want.ok()) << what << ": " << want.status();
          absl::StatusOr<LocalTensor> got_device = op.op(*engine_, *device_in);
          ASSERT_TRUE(got_device.ok()) << what << ": " << got_device.status();
          EXPECT_EQ(got_device->space(), MemorySpace::kCuda) << what;
          absl::StatusOr<LocalTensor> got = ToHost(*engine_, *got_device);
          ASSERT_TRUE(got.ok()) << what << ": " << got.status();
          EXPECT_TRUE(SameBytes(*got, *want)) << what << ": the GPU result differs from the host's";
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_TRUE(stream_.Sync().ok());
}

// Placing every chunk back gives the input: the host reference itself is
// right, not only equal to the GPU.
TEST_F(CudaCopyEngineTest, ChunksPlacedBackOnTheGpuAreTheInput) {
  const LocalTensor host_in = PatternTensor(DType::kF32, {7, 9, 3}, 5);
  absl::StatusOr<LocalTensor> device_in = ToDevice(*engine_, host_in);
  ASSERT_TRUE(device_in.ok()) << device_in.status();
  for (int dim = 0; dim < 3; ++dim) {
    absl::StatusOr<LocalTensor> back = ChunksPlacedBack(*engine_, *device_in, dim, 4);
    ASSERT_TRUE(back.ok()) << back.status();
    absl::StatusOr<LocalTensor> got = ToHost(*engine_, *back);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(SameBytes(*got, host_in)) << "dim " << dim;
  }
}

TEST_F(CudaCopyEngineTest, ANullPointerIsAnErrorStatusAndTheEngineStillWorks) {
  absl::StatusOr<LocalTensor> buf = engine_->Allocate(DType::kU8, {64, 64});
  ASSERT_TRUE(buf.ok()) << buf.status();
  Copy2D contiguous{/*rows=*/1, /*row_bytes=*/256, 0, 256, 0, 256};
  Copy2D strided{/*rows=*/8, /*row_bytes=*/16, 0, 64, 0, 32};
  Fill2D fill_1d{/*rows=*/1, /*row_bytes=*/256, 0, 256};
  Fill2D fill_2d{/*rows=*/8, /*row_bytes=*/16, 0, 64};

  // cudaMemcpyAsync / CopyStridedRows / cudaMemsetAsync / cudaMemset2DAsync
  // reject a null pointer with cudaErrorInvalidValue before enqueueing.
  for (const Copy2D& copy : {contiguous, strided}) {
    absl::Status to_null = engine_->Copy(copy, nullptr, buf->data());
    EXPECT_EQ(to_null.code(), absl::StatusCode::kInvalidArgument) << to_null;
    EXPECT_NE(to_null.message().find("cuda copy of"), std::string::npos) << to_null;
    absl::Status from_null = engine_->Copy(copy, buf->data(), nullptr);
    EXPECT_EQ(from_null.code(), absl::StatusCode::kInvalidArgument) << from_null;
  }
  for (const Fill2D& fill : {fill_1d, fill_2d}) {
    absl::Status s = engine_->Fill(fill, nullptr);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("cuda zero fill of"), std::string::npos) << s;
  }
  // Not sticky: the stream and the engine go on working.
  EXPECT_TRUE(stream_.Sync().ok());
  const LocalTensor host_in = PatternTensor(DType::kU8, {64, 64}, 3);
  absl::StatusOr<LocalTensor> device_in = ToDevice(*engine_, host_in);
  ASSERT_TRUE(device_in.ok()) << device_in.status();
  absl::StatusOr<LocalTensor> copy = TakeSlab(*engine_, *device_in, 1, 0, 64);
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<LocalTensor> got = ToHost(*engine_, *copy);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(SameBytes(*got, host_in));
}

// `bytes` of device memory (cudaMalloc), or null.
uint8_t* DeviceBytes(size_t bytes) {
  void* p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? static_cast<uint8_t*>(p) : nullptr;
}

// The strided copy kernel moves 16, 8, 4, 2 or 1 bytes per thread by the
// alignment of its pointers, pitches and width: at each, and with more rows
// than one grid's height, it writes what cudaMemcpy2DAsync writes, and no
// byte between the rows; so does CopyStridedRows, which sends wide rows not
// 4-byte aligned to cudaMemcpy2DAsync (the 4000-byte rows at offset 3).
TEST_F(CudaCopyEngineTest, StridedCopiesEqualCudaMemcpy2DAtEveryAlignment) {
  struct Shape {
    size_t offset, width, extra_pitch, height;
  };
  // 17M rows of 16 bytes: rows of one uint4 take blocks of 256 rows, and a
  // grid is at most 65,535 blocks high, so that case wraps around it.
  const std::vector<Shape> shapes = {
      {0, 16, 16, 5},       {0, 4096, 64, 33},    {8, 24, 8, 7},    {4, 12, 4, 9},
      {2, 6, 2, 3},         {1, 5, 3, 4},         {0, 1, 0, 6},     {3, 4000, 5, 2},
      {0, 16000, 384, 300}, {0, 16, 0, 17000000}, {16, 2048, 0, 1}, {2, 1002, 2, 40},
  };
  const std::pair<const char*, decltype(&CopyStridedRows)> copies[] = {
      {"CopyStridedRows", &CopyStridedRows}, {"CopyStridedRowsOnCores", &CopyStridedRowsOnCores}};
  for (const Shape& s : shapes) {
    const size_t pitch = s.width + s.extra_pitch;
    const size_t bytes = s.offset + pitch * s.height;
    std::vector<uint8_t> host(bytes);
    for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<uint8_t>(i * 131 + 7);
    uint8_t* src = DeviceBytes(bytes);
    uint8_t* got_device = DeviceBytes(bytes);
    uint8_t* reference = DeviceBytes(bytes);
    ASSERT_TRUE(src != nullptr && got_device != nullptr && reference != nullptr) << bytes;
    ASSERT_EQ(cudaMemcpy(src, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    // Rows `pitch` apart in src, packed or `pitch` apart in dst: both ways.
    const size_t dst_pitch = s.height % 2 == 0 ? pitch : s.width;
    ASSERT_EQ(cudaMemset(reference, 0xab, bytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy2DAsync(reference + s.offset, dst_pitch, src + s.offset, pitch, s.width,
                                s.height, cudaMemcpyDeviceToDevice, stream_.get()),
              cudaSuccess);
    ASSERT_TRUE(stream_.Sync().ok());
    std::vector<uint8_t> got(bytes), want(bytes);
    ASSERT_EQ(cudaMemcpy(want.data(), reference, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (const auto& [name, copy] : copies) {
      const std::string what = absl::StrCat(name, ": offset ", s.offset, ", ", s.height,
                                            " rows of ", s.width, " bytes, pitch ", pitch);
      ASSERT_EQ(cudaMemset(got_device, 0xab, bytes), cudaSuccess);
      ASSERT_EQ(copy(got_device + s.offset, dst_pitch, src + s.offset, pitch, s.width, s.height,
                     stream_.get()),
                cudaSuccess)
          << what;
      ASSERT_TRUE(stream_.Sync().ok()) << what;
      ASSERT_EQ(cudaMemcpy(got.data(), got_device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_TRUE(got == want) << what;
    }
    cudaFree(src);
    cudaFree(got_device);
    cudaFree(reference);
  }
  // Refused before anything runs, as cudaMemcpy2DAsync refuses them.
  uint8_t* buf = DeviceBytes(256);
  ASSERT_NE(buf, nullptr);
  for (const auto& [name, copy] : copies) {
    EXPECT_EQ(copy(nullptr, 16, buf, 16, 16, 2, stream_.get()), cudaErrorInvalidValue) << name;
    EXPECT_EQ(copy(buf, 8, buf + 128, 16, 16, 2, stream_.get()), cudaErrorInvalidPitchValue)
        << name;
  }
  EXPECT_TRUE(stream_.Sync().ok());
  cudaFree(buf);
}

// Rows farther apart than the device's maximum pitch (about 2 GiB), which
// cudaMemset2DAsync refuses, are copied and zero-filled one row at a time
// (cuda_copy_plan.h): 3 rows of 16 bytes, max pitch + 64 apart.
TEST_F(CudaCopyEngineTest, RowsFartherApartThanTheMaximumPitchGoRowByRow) {
  int device = 0, max_pitch = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device), cudaSuccess);
  const size_t pitch = static_cast<size_t>(max_pitch) + 64, rows = 3, row = 16;
  const size_t bytes = pitch * (rows - 1) + row;
  uint8_t* wide = DeviceBytes(bytes);
  uint8_t* packed = DeviceBytes(rows * row);
  ASSERT_TRUE(wide != nullptr && packed != nullptr) << bytes << " bytes";
  std::vector<uint8_t> want(rows * row);
  for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<uint8_t>(i + 1);
  for (size_t r = 0; r < rows; ++r) {
    ASSERT_EQ(cudaMemcpy(wide + r * pitch, want.data() + r * row, row, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  const auto p = static_cast<int64_t>(pitch), n = static_cast<int64_t>(row);
  ASSERT_TRUE(engine_->Copy(Copy2D{3, n, 0, p, 0, n}, packed, wide).ok());
  ASSERT_TRUE(stream_.Sync().ok());
  std::vector<uint8_t> got(rows * row);
  ASSERT_EQ(cudaMemcpy(got.data(), packed, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(got == want);
  // Zero the first 8 bytes of each wide row: the other 8 stay.
  ASSERT_TRUE(engine_->Fill(Fill2D{3, 8, 0, p}, wide).ok());
  ASSERT_TRUE(stream_.Sync().ok());
  for (size_t r = 0; r < rows; ++r) {
    uint8_t back[16];
    ASSERT_EQ(cudaMemcpy(back, wide + r * pitch, row, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < row; ++i) {
      EXPECT_EQ(back[i], i < 8 ? 0 : want[r * row + i]) << "row " << r << ", byte " << i;
    }
  }
  cudaFree(wide);
  cudaFree(packed);
}

TEST_F(CudaCopyEngineTest, AnImpossibleAllocationIsAnErrorStatus) {
  // 2^60 bytes: more than any GPU has.
  absl::StatusOr<LocalTensor> t =
      engine_->Allocate(DType::kU8, {int64_t{1} << 30, int64_t{1} << 30});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("cuda allocation of"), std::string::npos) << t.status();
  EXPECT_TRUE(stream_.Sync().ok());
}

}  // namespace
}  // namespace reshard
