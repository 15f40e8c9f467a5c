// GlooCommunicator on ranks as threads: each collective along each mesh dim
// for every dtype and reduce op, and on the group of every set of mesh dims
// of 3-D meshes, against values computed from the members' inputs; argument
// errors; and failures of a peer.
#include "collectives/gloo/gloo_communicator.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/in_process_store.h"
#include "collectives/tensor/host_math.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"

namespace reshard {
namespace {

constexpr DType kReduceDTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                                   DType::kI32, DType::kI16, DType::kI8,  DType::kU8};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin,
                             ReduceOp::kProd};

GlooOptions FastOptions() {
  GlooOptions o;
  o.timeout = absl::Seconds(20);
  return o;
}

DeviceMesh Mesh(std::vector<int64_t> sizes) { return *DeviceMesh::Create(std::move(sizes)); }

// A small value that identifies (rank, element) and survives every dtype
// (|v| <= 4, so sums over 3 ranks and products stay exact even in i8/bf16).
double Value(int64_t rank, int64_t i) { return static_cast<double>((rank * 7 + i * 3) % 5) - 1; }

std::vector<char> Fill(DType dtype, int64_t count, int64_t rank, int64_t offset = 0) {
  std::vector<char> buf(count * ItemSize(dtype));
  for (int64_t i = 0; i < count; ++i) {
    double v = Value(rank, offset + i);
    if (dtype == DType::kU8) v += 1;  // keep unsigned values non-negative
    StoreFromDouble(v, buf.data(), i, dtype);
  }
  return buf;
}

double Reduce(ReduceOp op, const std::vector<double>& xs, bool integral) {
  double r = xs[0];
  for (size_t k = 1; k < xs.size(); ++k) {
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg:
        r += xs[k];
        break;
      case ReduceOp::kProd:
        r *= xs[k];
        break;
      case ReduceOp::kMax:
        r = std::max(r, xs[k]);
        break;
      case ReduceOp::kMin:
        r = std::min(r, xs[k]);
        break;
    }
  }
  if (op == ReduceOp::kAvg) {
    r /= static_cast<double>(xs.size());
    if (integral) r = std::trunc(r);
  }
  return r;
}

bool Integral(DType d) {
  return d != DType::kF64 && d != DType::kF32 && d != DType::kF16 && d != DType::kBF16;
}

TEST(GlooCommunicatorTest, AllGatherAlongEachMeshDim) {
  const DeviceMesh mesh = Mesh({2, 3});
  const int64_t count = 5;
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kI64, DType::kU8, DType::kBool}) {
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
      std::vector<absl::Status> st =
          RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
            const std::vector<int64_t> group = mesh.GroupAlong(dim, c.rank());
            std::vector<char> send = Fill(dtype, count, c.rank());
            std::vector<char> recv(send.size() * group.size());
            if (absl::Status s =
                    c.AllGather(MeshDimSet::Single(dim), send.data(), recv.data(), count, dtype);
                !s.ok())
              return s;
            for (size_t j = 0; j < group.size(); ++j) {
              std::vector<char> want = Fill(dtype, count, group[j]);
              if (std::memcmp(want.data(), recv.data() + j * want.size(), want.size()) != 0) {
                return absl::InternalError(absl::StrCat("chunk ", j, " differs"));
              }
            }
            return absl::OkStatus();
          });
      EXPECT_TRUE(FirstError(st).ok())
          << DTypeName(dtype) << " dim " << dim << ": " << FirstError(st);
    }
  }
}

TEST(GlooCommunicatorTest, AllReduceAndReduceScatterEveryDTypeAndOp) {
  const DeviceMesh mesh = Mesh({3, 2});
  const int64_t count = 7;
  for (DType dtype : kReduceDTypes) {
    for (ReduceOp op : kOps) {
      for (int dim = 0; dim < mesh.ndim(); ++dim) {
        std::vector<absl::Status> st =
            RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
              const std::vector<int64_t> group = mesh.GroupAlong(dim, c.rank());
              const int64_t n = static_cast<int64_t>(group.size());
              const int64_t me = c.coordinate()[dim];
              auto expected = [&](int64_t i) {
                std::vector<double> xs;
                for (int64_t r : group) {
                  std::vector<char> v = Fill(dtype, n * count, r);
                  xs.push_back(LoadAsDouble(v.data(), i, dtype));
                }
                return Reduce(op, xs, Integral(dtype));
              };
              // all_reduce over the n * count elements, in place.
              std::vector<char> buf = Fill(dtype, n * count, c.rank());
              if (absl::Status s =
                      c.AllReduce(MeshDimSet::Single(dim), buf.data(), n * count, dtype, op);
                  !s.ok())
                return s;
              for (int64_t i = 0; i < n * count; ++i) {
                const double got = LoadAsDouble(buf.data(), i, dtype);
                if (std::abs(got - expected(i)) > 1e-2) {
                  return absl::InternalError(
                      absl::StrFormat("all_reduce element %d: %g, want %g", i, got, expected(i)));
                }
              }
              // reduce_scatter: chunk `me` of the reduction.
              std::vector<char> send = Fill(dtype, n * count, c.rank());
              std::vector<char> recv(count * ItemSize(dtype));
              if (absl::Status s = c.ReduceScatter(MeshDimSet::Single(dim), send.data(),
                                                   recv.data(), count, dtype, op);
                  !s.ok())
                return s;
              for (int64_t i = 0; i < count; ++i) {
                const double got = LoadAsDouble(recv.data(), i, dtype);
                if (std::abs(got - expected(me * count + i)) > 1e-2) {
                  return absl::InternalError(absl::StrFormat(
                      "reduce_scatter element %d: %g, want %g", i, got, expected(me * count + i)));
                }
              }
              return absl::OkStatus();
            });
        EXPECT_TRUE(FirstError(st).ok()) << DTypeName(dtype) << " " << ReduceOpName(op) << " dim "
                                         << dim << ": " << FirstError(st);
      }
    }
  }
}

TEST(GlooCommunicatorTest, AllToAllAlongEachMeshDim) {
  const DeviceMesh mesh = Mesh({2, 3});
  const int64_t count = 3;
  for (DType dtype : {DType::kF64, DType::kF16, DType::kI8}) {
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
      std::vector<absl::Status> st =
          RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
            const std::vector<int64_t> group = mesh.GroupAlong(dim, c.rank());
            const int64_t n = static_cast<int64_t>(group.size());
            const int64_t me = c.coordinate()[dim];
            std::vector<char> send = Fill(dtype, n * count, c.rank());
            std::vector<char> recv(send.size());
            if (absl::Status s =
                    c.AllToAll(MeshDimSet::Single(dim), send.data(), recv.data(), count, dtype);
                !s.ok())
              return s;
            const size_t chunk = count * ItemSize(dtype);
            for (int64_t j = 0; j < n; ++j) {
              // Member j sent us chunk `me` of its input.
              std::vector<char> want = Fill(dtype, count, group[j], me * count);
              if (std::memcmp(want.data(), recv.data() + j * chunk, chunk) != 0) {
                return absl::InternalError(absl::StrCat("chunk from member ", j, " differs"));
              }
            }
            return absl::OkStatus();
          });
      EXPECT_TRUE(FirstError(st).ok())
          << DTypeName(dtype) << " dim " << dim << ": " << FirstError(st);
    }
  }
}

TEST(GlooCommunicatorTest, SizeOneDimAndZeroCountNeverCommunicate) {
  const DeviceMesh mesh = Mesh({1, 2});
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
    EXPECT_EQ(c.group_context(MeshDimSet::Single(0)), nullptr);
    std::vector<char> send = Fill(DType::kF32, 4, c.rank());
    std::vector<char> recv(send.size());
    if (absl::Status s =
            c.AllGather(MeshDimSet::Single(0), send.data(), recv.data(), 4, DType::kF32);
        !s.ok())
      return s;
    EXPECT_EQ(send, recv);  // a group of one gathers itself
    if (absl::Status s =
            c.AllReduce(MeshDimSet::Single(1), nullptr, 0, DType::kF32, ReduceOp::kSum);
        !s.ok())
      return s;
    return c.AllToAll(MeshDimSet::Single(1), nullptr, nullptr, 0, DType::kI8);
  });
  EXPECT_TRUE(FirstError(st).ok()) << FirstError(st);
}

TEST(GlooCommunicatorTest, BadArgumentsNameTheCollectiveAndMeshDim) {
  const DeviceMesh mesh = Mesh({2});
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
    float x = 0;
    absl::Status s = c.AllReduce(MeshDimSet::Single(1), &x, 1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("all_reduce on mesh dim 1"), std::string::npos) << s;
    s = c.AllGather(MeshDimSet::Of({0, 2}), &x, &x, 1, DType::kF32);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("all_gather on mesh dims {0,2}"), std::string::npos) << s;
    s = c.AllToAll(MeshDimSet(), &x, &x, 1, DType::kF32);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("at least one mesh dim"), std::string::npos) << s;
    s = c.AllReduce(MeshDimSet::Single(0), &x, -1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    bool b = true;
    s = c.ReduceScatter(MeshDimSet::Single(0), &b, &b, 1, DType::kBool, ReduceOp::kMax);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    return absl::OkStatus();
  });
  EXPECT_TRUE(FirstError(st).ok());
}

TEST(GlooCommunicatorTest, ConnectRejectsBadRank) {
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> c =
      GlooCommunicator::Connect(Mesh({2, 2}), 4, NewInProcessStore(), FastOptions());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
}

// A peer that never arrives: the others fail within the timeout, naming
// the collective and mesh dim, and the communicator then stays broken.
TEST(GlooCommunicatorTest, StalledPeerTimesOut) {
  const DeviceMesh mesh = Mesh({3});
  GlooOptions options;
  options.timeout = absl::Seconds(1);
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, options, [&](GlooCommunicator& c) {
    if (c.rank() == 2) return absl::OkStatus();  // never joins the collective
    std::vector<float> send(4, 1.0f), recv(12);
    absl::Status s = c.AllGather(MeshDimSet::Single(0), send.data(), recv.data(), 4, DType::kF32);
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("all_gather on mesh dim 0"), std::string::npos) << s;
    absl::Status again =
        c.AllGather(MeshDimSet::Single(0), send.data(), recv.data(), 4, DType::kF32);
    EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
    return s.ok() ? absl::InternalError("no error") : absl::OkStatus();
  });
  EXPECT_TRUE(FirstError(st).ok()) << FirstError(st);
}

// A rank that never shows up: Connect fails after the timeout rather than hanging.
TEST(GlooCommunicatorTest, ConnectFailsWhenAPeerNeverArrives) {
  GlooOptions options;
  options.timeout = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> c =
      GlooCommunicator::Connect(*DeviceMesh::Create({2}), 0, NewInProcessStore(), options);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDeadlineExceeded) << c.status();
  EXPECT_NE(c.status().message().find("mesh dim 0"), std::string::npos) << c.status();
}

// Every collective on the group of `dims`: the flattened group (GroupOf,
// row-major), this rank at IndexInGroup, against values computed from the
// members' inputs.
absl::Status CheckCollectivesOn(GlooCommunicator& c, MeshDimSet dims) {
  const std::vector<int64_t> group = c.mesh().GroupOf(dims, c.rank());
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t me = c.mesh().IndexInGroup(dims, c.rank());
  constexpr int64_t kCount = 3;
  // all_gather: chunk j is member j's input.
  std::vector<char> send = Fill(DType::kF32, kCount, c.rank());
  std::vector<char> recv(send.size() * n);
  RESHARD_RETURN_IF_ERROR(c.AllGather(dims, send.data(), recv.data(), kCount, DType::kF32));
  for (int64_t j = 0; j < n; ++j) {
    if (Fill(DType::kF32, kCount, group[j]) !=
        std::vector<char>(recv.begin() + j * send.size(), recv.begin() + (j + 1) * send.size())) {
      return absl::InternalError(absl::StrCat("all_gather: chunk ", j, " differs"));
    }
  }
  // all_to_all: chunk j came from member j, which sent its chunk `me`.
  send = Fill(DType::kI8, n * kCount, c.rank());
  recv.assign(send.size(), 0);
  RESHARD_RETURN_IF_ERROR(c.AllToAll(dims, send.data(), recv.data(), kCount, DType::kI8));
  for (int64_t j = 0; j < n; ++j) {
    if (Fill(DType::kI8, kCount, group[j], me * kCount) !=
        std::vector<char>(recv.begin() + j * kCount, recv.begin() + (j + 1) * kCount)) {
      return absl::InternalError(absl::StrCat("all_to_all: chunk from member ", j, " differs"));
    }
  }
  // all_reduce (max, in place) and reduce_scatter (avg, chunk `me`).
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kAvg}) {
    const DType dtype = op == ReduceOp::kMax ? DType::kI32 : DType::kF64;
    std::vector<char> buf = Fill(dtype, n * kCount, c.rank());
    std::vector<char> chunk(kCount * ItemSize(dtype));
    if (op == ReduceOp::kMax) {
      RESHARD_RETURN_IF_ERROR(c.AllReduce(dims, buf.data(), n * kCount, dtype, op));
    } else {
      RESHARD_RETURN_IF_ERROR(c.ReduceScatter(dims, buf.data(), chunk.data(), kCount, dtype, op));
    }
    for (int64_t i = 0; i < (op == ReduceOp::kMax ? n * kCount : kCount); ++i) {
      const int64_t element = op == ReduceOp::kMax ? i : me * kCount + i;
      std::vector<double> xs;
      for (int64_t r : group) xs.push_back(Value(r, element));
      const double want = Reduce(op, xs, Integral(dtype));
      const double got = LoadAsDouble(op == ReduceOp::kMax ? buf.data() : chunk.data(), i, dtype);
      if (got != want) {
        return absl::InternalError(
            absl::StrFormat("%s element %d: %g, want %g", ReduceOpName(op), i, got, want));
      }
    }
  }
  return absl::OkStatus();
}

class GroupsOfMeshDimsTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

// One run per mesh: every rank walks the sets in the same order, so each
// group of several mesh dims is connected on its first collective.
TEST_P(GroupsOfMeshDimsTest, EveryCollectiveOnEverySetOfMeshDims) {
  const DeviceMesh mesh = Mesh(GetParam());
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
    for (int bits = 1; bits < (1 << mesh.ndim()); ++bits) {
      const MeshDimSet dims = MeshDimSet::FromBits(static_cast<uint8_t>(bits));
      if (absl::Status s = CheckCollectivesOn(c, dims); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("dims ", dims.ToString(), ": ", s.message()));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(FirstError(st).ok()) << mesh.ToString() << ": " << FirstError(st);
}

INSTANTIATE_TEST_SUITE_P(Meshes, GroupsOfMeshDimsTest,
                         ::testing::Values(std::vector<int64_t>{2, 2, 2},
                                           std::vector<int64_t>{2, 1, 3}));

// A group of several mesh dims is connected on first use; a member that
// never comes makes the others fail within the timeout, naming the group.
TEST(GlooCommunicatorTest, ALazyGroupWithAMissingMemberTimesOutNamingIt) {
  const DeviceMesh mesh = Mesh({2, 2});
  GlooOptions options;
  options.timeout = absl::Seconds(1);
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, options, [&](GlooCommunicator& c) {
    if (c.rank() == 3) return absl::OkStatus();  // never uses the group
    float x = 1;
    absl::Status s = c.AllReduce(MeshDimSet::Of({0, 1}), &x, 1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("all_reduce on mesh dims {0,1}"), std::string::npos) << s;
    absl::Status again = c.AllReduce(MeshDimSet::Single(0), &x, 1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
    return s.ok() ? absl::InternalError("no error") : absl::OkStatus();
  });
  EXPECT_TRUE(FirstError(st).ok()) << FirstError(st);
}

}  // namespace
}  // namespace reshard
