// The CUDA copy engine against the host engine (the reference): every pad,
// trim, chunk, place, zero fill and chunk packing the executor does
// (collectives/executor.cc, spec §11), on uneven and empty shards, for every
// dtype, gives the same bytes on the GPU as on the host. And a bad pointer is
// an error Status, after which the engine still works.
#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectives/cuda_copy_engine.h"
#include "collectives/local_tensor.h"
#include "gtest/gtest.h"
#include "planner/chunk.h"
#include "tests/gpu/cuda_test_util.h"

namespace reshard {
namespace {

constexpr DType kAllDTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                                DType::kI32, DType::kI16, DType::kI8,  DType::kU8,   DType::kBool};

// One operation of the executor's, run on any engine.
using Op = std::function<absl::StatusOr<LocalTensor>(CopyEngine&, const LocalTensor&)>;

// The executor's PackChunks (executor.cc): n chunks of `dim`, each padded with
// zeros to ceil(L/n) rows, one after another in a {n, chunk...} tensor.
absl::StatusOr<LocalTensor> PackChunks(CopyEngine& e, const LocalTensor& t, int dim, int64_t n) {
  const int64_t L = t.shape()[dim];
  const int64_t c = PaddedChunkSize(L, n);
  std::vector<int64_t> chunk = t.shape();
  chunk[dim] = c;
  std::vector<int64_t> shape = chunk;
  shape.insert(shape.begin(), n);
  absl::StatusOr<LocalTensor> out = e.Allocate(t.dtype(), shape);
  if (!out.ok()) return out.status();
  const int item = ItemSize(t.dtype());
  const int64_t chunk_bytes = NumElements(chunk) * item;
  for (int64_t j = 0; j < n; ++j) {
    char* dst = static_cast<char*>(out->data()) + j * chunk_bytes;
    const int64_t size = ChunkSize(L, n, j);
    absl::StatusOr<Copy2D> copy = SlabCopy(t.shape(), chunk, dim, ChunkOffset(L, n, j), 0, size, item);
    if (!copy.ok()) return copy.status();
    if (absl::Status s = e.Copy(*copy, dst, t.data()); !s.ok()) return s;
    if (size == c) continue;
    absl::StatusOr<Fill2D> fill = SlabFill(chunk, dim, size, c - size, item);
    if (!fill.ok()) return fill.status();
    if (absl::Status s = e.Fill(*fill, dst); !s.ok()) return s;
  }
  return out;
}

// The executor's UnpackChunks: the inverse, trimming each chunk to its size.
absl::StatusOr<LocalTensor> UnpackChunks(CopyEngine& e, const LocalTensor& packed, int dim,
                                         int64_t L) {
  const int64_t n = packed.shape()[0];
  std::vector<int64_t> chunk(packed.shape().begin() + 1, packed.shape().end());
  std::vector<int64_t> shape = chunk;
  shape[dim] = L;
  absl::StatusOr<LocalTensor> out = e.Allocate(packed.dtype(), shape);
  if (!out.ok()) return out.status();
  const int item = ItemSize(packed.dtype());
  const int64_t chunk_bytes = NumElements(chunk) * item;
  for (int64_t j = 0; j < n; ++j) {
    const char* src = static_cast<const char*>(packed.data()) + j * chunk_bytes;
    absl::StatusOr<Copy2D> copy =
        SlabCopy(chunk, shape, dim, 0, ChunkOffset(L, n, j), ChunkSize(L, n, j), item);
    if (!copy.ok()) return copy.status();
    if (absl::Status s = e.Copy(*copy, out->data(), src); !s.ok()) return s;
  }
  return out;
}

// Every chunk taken out (torch.chunk sizes) and placed back into a zeroed
// tensor: the input again.
absl::StatusOr<LocalTensor> ChunksPlacedBack(CopyEngine& e, const LocalTensor& t, int dim,
                                             int64_t n) {
  const int64_t L = t.shape()[dim];
  absl::StatusOr<LocalTensor> out = e.Allocate(t.dtype(), t.shape());
  if (!out.ok()) return out.status();
  if (absl::Status s = ZeroSlab(e, *out, dim, 0, L); !s.ok()) return s;
  for (int64_t j = 0; j < n; ++j) {
    absl::StatusOr<LocalTensor> piece = TakeSlab(e, t, dim, ChunkOffset(L, n, j), ChunkSize(L, n, j));
    if (!piece.ok()) return piece.status();
    if (absl::Status s = PlaceSlab(e, *piece, *out, dim, ChunkOffset(L, n, j)); !s.ok()) return s;
  }
  return out;
}

struct NamedOp {
  std::string name;
  Op op;
};

// Everything the executor does to a local tensor along `dim` (extent L).
std::vector<NamedOp> ExecutorOps(int dim, int64_t L) {
  std::vector<NamedOp> ops;
  ops.push_back({"pad by 3", [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, L + 3); }});
  if (L > 0) {
    ops.push_back({"trim by 1", [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, L - 1); }});
    ops.push_back({"trim to 0", [=](CopyEngine& e, const LocalTensor& t) { return Resize(e, t, dim, 0); }});
  }
  for (int64_t n = 1; n <= 5; ++n) {
    for (int64_t j = 0; j < n; ++j) {
      ops.push_back({absl::StrCat("take chunk ", j, " of ", n), [=](CopyEngine& e, const LocalTensor& t) {
                       return TakeSlab(e, t, dim, ChunkOffset(L, n, j), ChunkSize(L, n, j));
                     }});
    }
    ops.push_back({absl::StrCat("place ", n, " chunks back"), [=](CopyEngine& e, const LocalTensor& t) {
                     return ChunksPlacedBack(e, t, dim, n);
                   }});
    ops.push_back({absl::StrCat("pack ", n, " padded chunks"), [=](CopyEngine& e, const LocalTensor& t) {
                     return PackChunks(e, t, dim, n);
                   }});
    ops.push_back({absl::StrCat("pack and unpack ", n, " chunks"),
                   [=](CopyEngine& e, const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
                     absl::StatusOr<LocalTensor> packed = PackChunks(e, t, dim, n);
                     if (!packed.ok()) return packed.status();
                     return UnpackChunks(e, *packed, dim, L);
                   }});
  }
  ops.push_back({"zero the middle third", [=](CopyEngine& e, const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
                   absl::StatusOr<LocalTensor> copy = TakeSlab(e, t, dim, 0, L);
                   if (!copy.ok()) return copy.status();
                   if (absl::Status s = ZeroSlab(e, *copy, dim, ChunkOffset(L, 3, 1), ChunkSize(L, 3, 1));
                       !s.ok()) {
                     return s;
                   }
                   return copy;
                 }});
  return ops;
}

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
  for (DType dtype : kAllDTypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      const LocalTensor host_in = PatternTensor(dtype, shape, static_cast<int>(dtype));
      absl::StatusOr<LocalTensor> device_in = ToDevice(*engine_, host_in);
      ASSERT_TRUE(device_in.ok()) << device_in.status();
      for (int dim = 0; dim < static_cast<int>(shape.size()); ++dim) {
        for (const NamedOp& op : ExecutorOps(dim, shape[dim])) {
          const std::string what = absl::StrCat(op.name, " along dim ", dim, " of ",
                                                DTypeName(dtype), "[", absl::StrJoin(shape, ","), "]");
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

  // cudaMemcpyAsync / cudaMemcpy2DAsync / cudaMemsetAsync / cudaMemset2DAsync
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

TEST_F(CudaCopyEngineTest, AnImpossibleAllocationIsAnErrorStatus) {
  // 2^60 bytes: more than any GPU has.
  absl::StatusOr<LocalTensor> t = engine_->Allocate(DType::kU8, {int64_t{1} << 30, int64_t{1} << 30});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("cuda allocation of"), std::string::npos) << t.status();
  EXPECT_TRUE(stream_.Sync().ok());
}

}  // namespace
}  // namespace reshard
