// GlooCommunicator on ranks as threads: each collective along each mesh dim
// for every dtype and reduce op, against values computed from the members'
// inputs; argument errors; and failures of a peer.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/in_process_store.h"
#include "collectives/tensor/host_math.h"
#include "gtest/gtest.h"
#include "mesh/device_mesh.h"

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
      case ReduceOp::kSum: case ReduceOp::kAvg: r += xs[k]; break;
      case ReduceOp::kProd: r *= xs[k]; break;
      case ReduceOp::kMax: r = std::max(r, xs[k]); break;
      case ReduceOp::kMin: r = std::min(r, xs[k]); break;
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
      std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
        const std::vector<int64_t> group = mesh.GroupAlong(dim, c.rank());
        std::vector<char> send = Fill(dtype, count, c.rank());
        std::vector<char> recv(send.size() * group.size());
        if (absl::Status s = c.AllGather(dim, send.data(), recv.data(), count, dtype); !s.ok()) return s;
        for (size_t j = 0; j < group.size(); ++j) {
          std::vector<char> want = Fill(dtype, count, group[j]);
          if (std::memcmp(want.data(), recv.data() + j * want.size(), want.size()) != 0) {
            return absl::InternalError(absl::StrCat("chunk ", j, " differs"));
          }
        }
        return absl::OkStatus();
      });
      EXPECT_TRUE(FirstError(st).ok()) << DTypeName(dtype) << " dim " << dim << ": " << FirstError(st);
    }
  }
}

TEST(GlooCommunicatorTest, AllReduceAndReduceScatterEveryDTypeAndOp) {
  const DeviceMesh mesh = Mesh({3, 2});
  const int64_t count = 7;
  for (DType dtype : kReduceDTypes) {
    for (ReduceOp op : kOps) {
      for (int dim = 0; dim < mesh.ndim(); ++dim) {
        std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
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
          if (absl::Status s = c.AllReduce(dim, buf.data(), n * count, dtype, op); !s.ok()) return s;
          for (int64_t i = 0; i < n * count; ++i) {
            const double got = LoadAsDouble(buf.data(), i, dtype);
            if (std::abs(got - expected(i)) > 1e-2) {
              return absl::InternalError(absl::StrFormat("all_reduce element %d: %g, want %g", i, got, expected(i)));
            }
          }
          // reduce_scatter: chunk `me` of the reduction.
          std::vector<char> send = Fill(dtype, n * count, c.rank());
          std::vector<char> recv(count * ItemSize(dtype));
          if (absl::Status s = c.ReduceScatter(dim, send.data(), recv.data(), count, dtype, op); !s.ok()) return s;
          for (int64_t i = 0; i < count; ++i) {
            const double got = LoadAsDouble(recv.data(), i, dtype);
            if (std::abs(got - expected(me * count + i)) > 1e-2) {
              return absl::InternalError(absl::StrFormat("reduce_scatter element %d: %g, want %g", i, got, expected(me * count + i)));
            }
          }
          return absl::OkStatus();
        });
        EXPECT_TRUE(FirstError(st).ok()) << DTypeName(dtype) << " " << ReduceOpName(op) << " dim " << dim
                                         << ": " << FirstError(st);
      }
    }
  }
}

TEST(GlooCommunicatorTest, AllToAllAlongEachMeshDim) {
  const DeviceMesh mesh = Mesh({2, 3});
  const int64_t count = 3;
  for (DType dtype : {DType::kF64, DType::kF16, DType::kI8}) {
    for (int dim = 0; dim < mesh.ndim(); ++dim) {
      std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
        const std::vector<int64_t> group = mesh.GroupAlong(dim, c.rank());
        const int64_t n = static_cast<int64_t>(group.size());
        const int64_t me = c.coordinate()[dim];
        std::vector<char> send = Fill(dtype, n * count, c.rank());
        std::vector<char> recv(send.size());
        if (absl::Status s = c.AllToAll(dim, send.data(), recv.data(), count, dtype); !s.ok()) return s;
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
      EXPECT_TRUE(FirstError(st).ok()) << DTypeName(dtype) << " dim " << dim << ": " << FirstError(st);
    }
  }
}

TEST(GlooCommunicatorTest, SizeOneDimAndZeroCountNeverCommunicate) {
  const DeviceMesh mesh = Mesh({1, 2});
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
    EXPECT_EQ(c.group_context(0), nullptr);
    std::vector<char> send = Fill(DType::kF32, 4, c.rank());
    std::vector<char> recv(send.size());
    if (absl::Status s = c.AllGather(0, send.data(), recv.data(), 4, DType::kF32); !s.ok()) return s;
    EXPECT_EQ(send, recv);  // a group of one gathers itself
    if (absl::Status s = c.AllReduce(1, nullptr, 0, DType::kF32, ReduceOp::kSum); !s.ok()) return s;
    return c.AllToAll(1, nullptr, nullptr, 0, DType::kI8);
  });
  EXPECT_TRUE(FirstError(st).ok()) << FirstError(st);
}

TEST(GlooCommunicatorTest, BadArgumentsNameTheCollectiveAndMeshDim) {
  const DeviceMesh mesh = Mesh({2});
  std::vector<absl::Status> st = RunRanksOnThreads(mesh, FastOptions(), [&](GlooCommunicator& c) {
    float x = 0;
    absl::Status s = c.AllReduce(1, &x, 1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("all_reduce on mesh dim 1"), std::string::npos) << s;
    s = c.AllReduce(0, &x, -1, DType::kF32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    bool b = true;
    s = c.ReduceScatter(0, &b, &b, 1, DType::kBool, ReduceOp::kMax);
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
    absl::Status s = c.AllGather(0, send.data(), recv.data(), 4, DType::kF32);
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("all_gather on mesh dim 0"), std::string::npos) << s;
    absl::Status again = c.AllGather(0, send.data(), recv.data(), 4, DType::kF32);
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

}  // namespace
}  // namespace reshard
