// The executor's copies (executor_copies.h), which cuda_copy_engine_test runs
// on the GPU against the host, checked on the host in the default build: each
// succeeds on every shape the GPU test uses, and they compose as they must
// (placing every chunk back, or packing then unpacking, gives the input;
// padding keeps the input and zero-fills the rest).
#include "tests/gpu/executor_copies.h"

#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

// The shapes of cuda_copy_engine_test, in one dtype per item size.
TEST(ExecutorCopies, EveryOpSucceedsAndTheRoundTripsGiveTheInput) {
  const std::vector<std::vector<int64_t>> shapes = {
      {13}, {0}, {1}, {13, 5}, {5, 13}, {2, 1}, {4, 0, 3}, {3, 7, 4}, {2, 3, 5, 2}};
  HostCopyEngine engine;
  for (DType dtype : {DType::kF64, DType::kF32, DType::kBF16, DType::kU8}) {
    for (const std::vector<int64_t>& shape : shapes) {
      const LocalTensor in = PatternTensor(dtype, shape, 0);
      for (int dim = 0; dim < static_cast<int>(shape.size()); ++dim) {
        const std::string where = absl::StrCat(" along dim ", dim, " of ", DTypeName(dtype), "[",
                                               absl::StrJoin(shape, ","), "]");
        for (const NamedCopyOp& op : ExecutorCopyOps(dim, shape[dim])) {
          absl::StatusOr<LocalTensor> out = op.op(engine, in);
          ASSERT_TRUE(out.ok()) << op.name << where << ": " << out.status();
          if (op.name.rfind("place", 0) == 0 || op.name.rfind("pack and unpack", 0) == 0) {
            EXPECT_TRUE(SameBytes(*out, in)) << op.name << where;
          }
        }
        const int64_t L = shape[dim];
        absl::StatusOr<LocalTensor> padded = Resize(engine, in, dim, L + 3);
        ASSERT_TRUE(padded.ok());
        absl::StatusOr<LocalTensor> zeros = TakeSlab(engine, *padded, dim, L, 3);
        absl::StatusOr<LocalTensor> back = Resize(engine, *padded, dim, L);
        ASSERT_TRUE(zeros.ok() && back.ok());
        EXPECT_TRUE(SameBytes(*back, in)) << "pad then trim" << where;
        EXPECT_TRUE(SameBytes(*zeros, *LocalTensor::Zeros(dtype, zeros->shape())))
            << "padding is zeros" << where;
      }
    }
  }
}

// Packed chunk j holds chunk j of the input, zero-padded to ceil(L/n) rows.
TEST(ExecutorCopies, PackedChunksArePaddedWithZeros) {
  HostCopyEngine engine;
  const LocalTensor in = PatternTensor(DType::kI32, {5, 3}, 0);  // 5 rows over 4: 2, 2, 1, 0
  absl::StatusOr<LocalTensor> copy = TakeSlab(engine, in, 0, 0, 5);
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<LocalTensor> packed = PackChunks(engine, *std::move(copy), 0, 4);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_EQ(packed->shape(), (std::vector<int64_t>{4, 2, 3}));
  const int32_t* p = packed->data_as<int32_t>();
  const int32_t* x = in.data_as<int32_t>();
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t r = 0; r < 2; ++r) {
      const int64_t row = ChunkOffset(5, 4, j) + r;
      for (int64_t c = 0; c < 3; ++c) {
        const int32_t want = r < ChunkSize(5, 4, j) ? x[row * 3 + c] : 0;
        EXPECT_EQ(p[(j * 2 + r) * 3 + c], want) << "chunk " << j << " row " << r << " col " << c;
      }
    }
  }
}

}  // namespace
}  // namespace reshard
