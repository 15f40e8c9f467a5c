// The NCCL backend's GPU-free decisions (collectives/nccl/nccl_layout.h): split
// colors/keys checked against DeviceMesh::GroupOf for every set of mesh dims
// on many meshes, the dtype/op tables, and the NCCL/CUDA error mapping. Runs
// without CUDA.
#include "collectives/nccl/nccl_layout.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

DeviceMesh Mesh(std::vector<int64_t> sizes) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(std::move(sizes));
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

// ncclCommSplit puts the ranks of one color in one communicator, ordered by
// key. So for every set of mesh dims and every rank, the ranks sharing its
// color, sorted by key, must be exactly GroupOf(dims, rank) in order, the key
// the rank's index there (the chunk order of communicator.h), and the colors
// 0 .. (number of groups - 1).
class NcclSplitForTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(NcclSplitForTest, ColorsAndKeysReproduceGroupOfForEverySetOfMeshDims) {
  const DeviceMesh mesh = Mesh(GetParam());
  for (int bits = 1; bits < (1 << mesh.ndim()); ++bits) {
    const MeshDimSet dims = MeshDimSet::FromBits(static_cast<uint8_t>(bits));
    std::vector<NcclSplit> splits;
    std::map<int, std::map<int, int64_t>> groups;  // color -> key -> rank, as NCCL builds them
    for (int64_t rank = 0; rank < mesh.num_ranks(); ++rank) {
      absl::StatusOr<NcclSplit> split = NcclSplitFor(mesh, dims, rank);
      ASSERT_TRUE(split.ok()) << split.status();
      EXPECT_EQ(split->size, mesh.GroupSize(dims));
      const bool fresh_key = groups[split->color].emplace(split->key, rank).second;
      EXPECT_TRUE(fresh_key) << "two ranks share color " << split->color << " and key "
                             << split->key << " for dims " << dims.ToString();
      splits.push_back(*split);
    }
    const int64_t num_groups = mesh.num_ranks() / mesh.GroupSize(dims);
    ASSERT_EQ(static_cast<int64_t>(groups.size()), num_groups) << dims.ToString();
    EXPECT_EQ(groups.begin()->first, 0) << dims.ToString();
    EXPECT_EQ(groups.rbegin()->first, num_groups - 1) << dims.ToString();
    for (int64_t rank = 0; rank < mesh.num_ranks(); ++rank) {
      std::vector<int64_t> members;
      for (const auto& [key, member] : groups[splits[rank].color]) members.push_back(member);
      EXPECT_EQ(members, mesh.GroupOf(dims, rank))
          << "rank " << rank << " dims " << dims.ToString();
      EXPECT_EQ(splits[rank].key, mesh.IndexInGroup(dims, rank));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, NcclSplitForTest,
    ::testing::Values(std::vector<int64_t>{1}, std::vector<int64_t>{4}, std::vector<int64_t>{2, 3},
                      std::vector<int64_t>{2, 2, 2}, std::vector<int64_t>{1, 4},
                      std::vector<int64_t>{3, 1, 2}, std::vector<int64_t>{2, 1, 3},
                      std::vector<int64_t>{2, 3, 1, 2}));

TEST(NcclSplitFor, WorkedExample) {
  // Mesh 2x3x2, rank 9 = coordinate (1, 1, 1). Over mesh dims {0,2} its group
  // is {2, 3, 8, 9} (coordinate 1 on dim 1; row-major over dims 0 and 2),
  // where it is member 3; the groups of {0,2} are told apart by the
  // coordinate on dim 1, so its color is 1. Over {1}: the group
  // {7, 9, 11}, member 1, color = row-major rank of (1, 1) over dims 0, 2 = 3.
  absl::StatusOr<NcclSplit> split = NcclSplitFor(Mesh({2, 3, 2}), MeshDimSet::Of({0, 2}), 9);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->color, 1);
  EXPECT_EQ(split->key, 3);
  EXPECT_EQ(split->size, 4);
  split = NcclSplitFor(Mesh({2, 3, 2}), MeshDimSet::Single(1), 9);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->color, 3);
  EXPECT_EQ(split->key, 1);
  EXPECT_EQ(split->size, 3);
}

TEST(NcclSplitFor, RejectsRanksOutsideTheMeshAndBadSets) {
  const DeviceMesh mesh = Mesh({2, 2});
  for (int64_t rank : {int64_t{-1}, int64_t{4}}) {
    absl::StatusOr<NcclSplit> split = NcclSplitFor(mesh, MeshDimSet::Single(0), rank);
    EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(split.status().message()), HasSubstr(absl::StrCat("rank ", rank)));
    EXPECT_THAT(std::string(split.status().message()), HasSubstr("2x2"));
  }
  for (MeshDimSet dims : {MeshDimSet(), MeshDimSet::Of({0, 2})}) {
    absl::StatusOr<NcclSplit> split = NcclSplitFor(mesh, dims, 0);
    EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument) << dims.ToString();
    EXPECT_THAT(std::string(split.status().message()), HasSubstr(dims.ToString()));
  }
}

// Bytes per element of each NCCL type, from nccl.h's type names.
int NcclTypeSize(NcclType type) {
  switch (type) {
    case NcclType::kInt8:
    case NcclType::kUint8:
      return 1;
    case NcclType::kFloat16:
    case NcclType::kBfloat16:
      return 2;
    case NcclType::kInt32:
    case NcclType::kUint32:
    case NcclType::kFloat32:
      return 4;
    case NcclType::kInt64:
    case NcclType::kUint64:
    case NcclType::kFloat64:
      return 8;
  }
  return 0;
}

const DType kAllDTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                            DType::kI32, DType::kI16, DType::kI8,  DType::kU8,   DType::kBool};

TEST(NcclMoveBuffer, CarriesExactlyTheBytesOfEveryDType) {
  for (DType dtype : kAllDTypes) {
    for (int64_t count : {0, 1, 7, 1000}) {
      const NcclBuffer buffer = NcclMoveBuffer(dtype, count);
      EXPECT_EQ(buffer.count * NcclTypeSize(buffer.type), count * ItemSize(dtype))
          << DTypeName(dtype) << " x " << count;
    }
  }
}

TEST(NcclMoveBuffer, UsesTheNativeTypeWhereNcclHasOne) {
  const std::map<DType, NcclType> native = {
      {DType::kF64, NcclType::kFloat64}, {DType::kF32, NcclType::kFloat32},
      {DType::kF16, NcclType::kFloat16}, {DType::kBF16, NcclType::kBfloat16},
      {DType::kI64, NcclType::kInt64},   {DType::kI32, NcclType::kInt32},
      {DType::kI8, NcclType::kInt8},     {DType::kU8, NcclType::kUint8}};
  for (const auto& [dtype, type] : native) {
    EXPECT_EQ(NcclMoveBuffer(dtype, 5).type, type) << DTypeName(dtype);
    EXPECT_EQ(NcclMoveBuffer(dtype, 5).count, 5) << DTypeName(dtype);
  }
  // No NCCL type: moved as bytes.
  EXPECT_EQ(NcclMoveBuffer(DType::kI16, 5).type, NcclType::kUint8);
  EXPECT_EQ(NcclMoveBuffer(DType::kI16, 5).count, 10);
  EXPECT_EQ(NcclMoveBuffer(DType::kBool, 5).type, NcclType::kUint8);
  EXPECT_EQ(NcclMoveBuffer(DType::kBool, 5).count, 5);
}

TEST(NcclReduceType, NativeTypesReduceAndI16AndBoolAreUnimplemented) {
  for (DType dtype : kAllDTypes) {
    absl::StatusOr<NcclType> type = NcclReduceType(dtype, "all_reduce", MeshDimSet::Single(2));
    if (dtype == DType::kI16 || dtype == DType::kBool) {
      EXPECT_EQ(type.status().code(), absl::StatusCode::kUnimplemented) << DTypeName(dtype);
      EXPECT_THAT(std::string(type.status().message()), HasSubstr("all_reduce on mesh dim 2"));
    } else {
      ASSERT_TRUE(type.ok()) << DTypeName(dtype) << ": " << type.status();
      // The reduction must see whole elements of the right width.
      EXPECT_EQ(*type, NcclMoveBuffer(dtype, 1).type) << DTypeName(dtype);
      EXPECT_EQ(NcclTypeSize(*type), ItemSize(dtype)) << DTypeName(dtype);
    }
  }
  EXPECT_THAT(
      std::string(
          NcclReduceType(DType::kI16, "reduce_scatter", MeshDimSet::Of({0, 1})).status().message()),
      HasSubstr("i16"));
  EXPECT_THAT(
      std::string(
          NcclReduceType(DType::kI16, "reduce_scatter", MeshDimSet::Of({0, 1})).status().message()),
      HasSubstr("reduce_scatter on mesh dims {0,1}"));
}

TEST(NcclReduceOpFor, MapsEveryOpToItsNamesake) {
  EXPECT_EQ(NcclReduceOpFor(ReduceOp::kSum), NcclOp::kSum);
  EXPECT_EQ(NcclReduceOpFor(ReduceOp::kAvg), NcclOp::kAvg);
  EXPECT_EQ(NcclReduceOpFor(ReduceOp::kMax), NcclOp::kMax);
  EXPECT_EQ(NcclReduceOpFor(ReduceOp::kMin), NcclOp::kMin);
  EXPECT_EQ(NcclReduceOpFor(ReduceOp::kProd), NcclOp::kProd);
  std::set<NcclOp> distinct;
  for (int op = 0; op < kNumReduceOps; ++op) {
    distinct.insert(NcclReduceOpFor(static_cast<ReduceOp>(op)));
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kNumReduceOps));
}

TEST(NcclStatus, SuccessIsOk) { EXPECT_TRUE(NcclStatus(0, "no error", "", "ctx").ok()); }

TEST(NcclStatus, CodesAndMessages) {
  const std::map<NcclResult, absl::StatusCode> want = {
      {NcclResult::kUnhandledCudaError, absl::StatusCode::kInternal},
      {NcclResult::kSystemError, absl::StatusCode::kUnavailable},
      {NcclResult::kInternalError, absl::StatusCode::kInternal},
      {NcclResult::kInvalidArgument, absl::StatusCode::kInvalidArgument},
      {NcclResult::kInvalidUsage, absl::StatusCode::kFailedPrecondition},
      {NcclResult::kRemoteError, absl::StatusCode::kUnavailable},
      {NcclResult::kInProgress, absl::StatusCode::kUnavailable}};
  for (const auto& [result, code] : want) {
    const absl::Status s = NcclStatus(static_cast<int>(result), "the string", "the last error",
                                      "all_gather on mesh dim 1 (ncclAllGather)");
    EXPECT_EQ(s.code(), code) << static_cast<int>(result);
    EXPECT_THAT(std::string(s.message()), HasSubstr("all_gather on mesh dim 1 (ncclAllGather)"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("the string"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("the last error"));
  }
  EXPECT_THAT(std::string(NcclStatus(2, "s", "", "c").message()), HasSubstr("ncclSystemError"));
  const absl::Status unknown = NcclStatus(42, "s", "", "c");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("unknown"));
}

TEST(CudaStatus, CodesAndMessages) {
  EXPECT_TRUE(CudaStatus(0, "cudaSuccess", "no error", "ctx").ok());
  const std::map<int, absl::StatusCode> want = {
      {static_cast<int>(CudaError::kMemoryAllocation), absl::StatusCode::kResourceExhausted},
      {static_cast<int>(CudaError::kInvalidValue), absl::StatusCode::kInvalidArgument},
      {static_cast<int>(CudaError::kNoDevice), absl::StatusCode::kFailedPrecondition},
      {static_cast<int>(CudaError::kInsufficientDriver), absl::StatusCode::kFailedPrecondition},
      {static_cast<int>(CudaError::kInvalidDevice), absl::StatusCode::kFailedPrecondition},
      {static_cast<int>(CudaError::kInitializationError), absl::StatusCode::kFailedPrecondition},
      {700, absl::StatusCode::kInternal}};  // cudaErrorIllegalAddress
  for (const auto& [error, code] : want) {
    const absl::Status s = CudaStatus(error, "cudaErrorX", "what went wrong", "cuda copy");
    EXPECT_EQ(s.code(), code) << error;
    EXPECT_THAT(std::string(s.message()), HasSubstr("cuda copy: CUDA error cudaErrorX"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("what went wrong"));
  }
}

}  // namespace
}  // namespace reshard
