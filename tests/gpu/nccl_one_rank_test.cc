// What one GPU can prove of the NCCL backend (collectives/nccl_communicator.h):
// NCCL refuses two ranks on one device, so every communicator here has one
// rank. With NcclOptions::split_size_one_dims the backend joins NCCL even on a
// one-rank mesh and splits one NCCL group per mesh dim, so its collectives go
// through NCCL (its one-rank paths); without it they are local copies. Both
// must return their input, and a bad pointer must be an error Status.
#include <nccl.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/stores/in_process_store.h"
#include "gtest/gtest.h"
#include "harness/ground_truth.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"
#include "tests/gpu/cuda_test_util.h"
#include "tests/gpu/executor_copies.h"

namespace reshard {
namespace {

constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin,
                                ReduceOp::kProd};

// The raw NCCL calls the backend is built on, on one rank: init, split,
// finalize + destroy, abort.
TEST(NcclOneRank, RawCommunicatorInitSplitFinalizeAndAbort) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t world = nullptr;
  ASSERT_EQ(ncclCommInitRank(&world, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  int count = 0, rank = -1;
  EXPECT_EQ(ncclCommCount(world, &count), ncclSuccess);
  EXPECT_EQ(ncclCommUserRank(world, &rank), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(rank, 0);
  ncclComm_t group = nullptr;
  ASSERT_EQ(ncclCommSplit(world, /*color=*/0, /*key=*/0, &group, nullptr), ncclSuccess)
      << ncclGetLastError(world);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(ncclCommCount(group, &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommFinalize(group), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(group), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(world), ncclSuccess);
}

class NcclCommunicatorOneRankTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stream_.creation_status().ok()) << stream_.creation_status();
  }

  // Rank 0 of `sizes` (every size 1), through the in-process store.
  std::unique_ptr<NcclCommunicator> Connect(std::vector<int64_t> sizes, bool split) {
    absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(std::move(sizes));
    EXPECT_TRUE(mesh.ok()) << mesh.status();
    if (!mesh.ok()) return nullptr;
    NcclOptions options;
    options.split_size_one_dims = split;
    options.prefix = absl::StrCat("test", ++connections_);
    absl::StatusOr<std::unique_ptr<NcclCommunicator>> comm =
        NcclCommunicator::Connect(*mesh, 0, *store_, stream_.get(), options);
    EXPECT_TRUE(comm.ok()) << comm.status();
    return comm.ok() ? *std::move(comm) : nullptr;
  }

  TestStream stream_;
  std::shared_ptr<Store> store_ = NewInProcessStore();
  int connections_ = 0;
};

TEST_F(NcclCommunicatorOneRankTest, SplitSizeOneDimsGivesEveryDimItsOwnOneRankNcclGroup) {
  std::unique_ptr<NcclCommunicator> comm = Connect({1, 1}, /*split=*/true);
  ASSERT_NE(comm, nullptr);
  ASSERT_NE(comm->group_comm(MeshDimSet::Single(0)), nullptr);
  ASSERT_NE(comm->group_comm(MeshDimSet::Single(1)), nullptr);
  EXPECT_NE(comm->group_comm(MeshDimSet::Single(0)), comm->group_comm(MeshDimSet::Single(1)));
  for (int dim = 0; dim < 2; ++dim) {
    int count = 0, rank = -1;
    EXPECT_EQ(ncclCommCount(comm->group_comm(MeshDimSet::Single(dim)), &count), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(comm->group_comm(MeshDimSet::Single(dim)), &rank), ncclSuccess);
    EXPECT_EQ(count, 1) << "dim " << dim;
    EXPECT_EQ(rank, 0) << "dim " << dim;
  }
}

TEST_F(NcclCommunicatorOneRankTest, ByDefaultAOneRankMeshJoinsNoNccl) {
  std::unique_ptr<NcclCommunicator> comm = Connect({1, 1}, /*split=*/false);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->group_comm(MeshDimSet::Single(0)), nullptr);
  EXPECT_EQ(comm->group_comm(MeshDimSet::Single(1)), nullptr);
}

// GetParam(): NcclOptions::split_size_one_dims.
class NcclOneRankCollectivesTest : public NcclCommunicatorOneRankTest,
                                   public testing::WithParamInterface<bool> {};

// Every collective of communicator.h on a one-member group returns its input,
// through NCCL (GetParam() true) or the local copies (false).
TEST_P(NcclOneRankCollectivesTest, EveryCollectiveOnAOneRankGroupReturnsItsInput) {
  std::unique_ptr<NcclCommunicator> comm = Connect({1, 1}, /*split=*/GetParam());
  ASSERT_NE(comm, nullptr);
  CudaCopyEngine& engine = static_cast<CudaCopyEngine&>(comm->copy_engine());
  for (DType dtype : kEveryDType) {
    for (int dim = 0; dim < 2; ++dim) {
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{4099}}) {
        const std::string what = absl::StrCat(DTypeName(dtype), " x ", count, " on mesh dim ", dim);
        const LocalTensor in = *TestTensor(dtype, {count}, static_cast<uint64_t>(count) + 1, 1);
        absl::StatusOr<LocalTensor> send = ToDevice(engine, in);
        absl::StatusOr<LocalTensor> recv = engine.Allocate(dtype, {count});
        ASSERT_TRUE(send.ok() && recv.ok()) << what;
        auto expect_input = [&](const LocalTensor& device, absl::string_view collective) {
          absl::StatusOr<LocalTensor> got = ToHost(engine, device);
          ASSERT_TRUE(got.ok()) << got.status();
          EXPECT_TRUE(SameBytes(*got, in)) << collective << " changed " << what;
        };
        absl::Status s =
            comm->AllGather(MeshDimSet::Single(dim), send->data(), recv->data(), count, dtype);
        ASSERT_TRUE(s.ok()) << what << ": " << s;
        expect_input(*recv, "all_gather");
        s = comm->AllToAll(MeshDimSet::Single(dim), send->data(), recv->data(), count, dtype);
        ASSERT_TRUE(s.ok()) << what << ": " << s;
        expect_input(*recv, "all_to_all");
        for (ReduceOp op : kAllOps) {
          s = comm->ReduceScatter(MeshDimSet::Single(dim), send->data(), recv->data(), count, dtype,
                                  op);
          if (dtype == DType::kI16 || dtype == DType::kBool) {
            // NCCL has no 16-bit integers; reductions of bool are undefined.
            EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << what << ": " << s;
            s = comm->AllReduce(MeshDimSet::Single(dim), recv->data(), count, dtype, op);
            EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << what << ": " << s;
            continue;
          }
          ASSERT_TRUE(s.ok()) << what << " " << ReduceOpName(op) << ": " << s;
          expect_input(*recv, absl::StrCat("reduce_scatter ", ReduceOpName(op)));
          s = comm->AllReduce(MeshDimSet::Single(dim), recv->data(), count, dtype, op);
          ASSERT_TRUE(s.ok()) << what << " " << ReduceOpName(op) << ": " << s;
          expect_input(*recv, absl::StrCat("all_reduce ", ReduceOpName(op)));
        }
      }
    }
  }
  EXPECT_TRUE(stream_.Sync().ok());
}

INSTANTIATE_TEST_SUITE_P(NcclOrLocal, NcclOneRankCollectivesTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "ThroughNccl" : "LocalCopies";
                         });

// A null buffer: NCCL's one-rank all_gather is a cudaMemcpyAsync, which
// rejects it; the backend reports it as a Status naming the collective and
// then refuses further calls (its destructor aborts the NCCL communicators).
TEST_F(NcclCommunicatorOneRankTest, ABadPointerThroughNcclIsAnErrorStatusNotACrash) {
  std::unique_ptr<NcclCommunicator> comm = Connect({1}, /*split=*/true);
  ASSERT_NE(comm, nullptr);
  ASSERT_NE(comm->group_comm(MeshDimSet::Single(0)), nullptr);
  absl::StatusOr<LocalTensor> send = comm->copy_engine().Allocate(DType::kF32, {64});
  ASSERT_TRUE(send.ok()) << send.status();
  absl::Status s = comm->AllGather(MeshDimSet::Single(0), send->data(), nullptr, 64, DType::kF32);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("all_gather on mesh dim 0 (ncclAllGather"), std::string::npos) << s;
  absl::StatusOr<LocalTensor> recv = comm->copy_engine().Allocate(DType::kF32, {64});
  ASSERT_TRUE(recv.ok()) << recv.status();
  s = comm->AllGather(MeshDimSet::Single(0), send->data(), recv->data(), 64, DType::kF32);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  comm.reset();  // aborts rather than finalizes: must return
  EXPECT_TRUE(stream_.Sync().ok());
}

// The same without NCCL: the local copy's cudaMemcpyAsync rejects it, and
// the communicator stays usable (nothing of NCCL's is involved).
TEST_F(NcclCommunicatorOneRankTest, ABadPointerInALocalCopyIsAnInvalidArgument) {
  std::unique_ptr<NcclCommunicator> comm = Connect({1}, /*split=*/false);
  ASSERT_NE(comm, nullptr);
  absl::StatusOr<LocalTensor> send = comm->copy_engine().Allocate(DType::kF32, {64});
  absl::StatusOr<LocalTensor> recv = comm->copy_engine().Allocate(DType::kF32, {64});
  ASSERT_TRUE(send.ok() && recv.ok());
  absl::Status s = comm->AllGather(MeshDimSet::Single(0), send->data(), nullptr, 64, DType::kF32);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("all_gather on mesh dim 0"), std::string::npos) << s;
  s = comm->AllGather(MeshDimSet::Single(0), send->data(), recv->data(), 64, DType::kF32);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(stream_.Sync().ok());
}

}  // namespace
}  // namespace reshard
