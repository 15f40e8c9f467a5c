// Runs a plan on real buffers with the Gloo backend (CPU memory, TCP on
// loopback): a 13x8 f32 tensor on a 2x2x2 mesh goes from S(0)[1]S(0)[0]R
// (rows split over mesh dim 1, then mesh dim 0; uneven: 4, 3, 3, 3 rows) to
// RS(1)S(0) (columns over mesh dim 1, rows over mesh dim 2).
//
//   run_plan                         all 8 ranks as threads of this process
//   run_plan --rank R --store DIR    one rank per process: start ranks 0..7,
//                                    each with the same empty directory DIR
//
// Every rank starts from its shard of a known global tensor, executes the
// plan, and checks its result against its shard of the destination computed
// directly (harness/ground_truth.h). Exit code 1 on any error or mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collectives/communicator.h"
#include "collectives/executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/gloo/thread_ranks.h"
#include "collectives/stores/file_store.h"
#include "collectives/tensor/local_tensor.h"
#include "harness/ground_truth.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan.h"

namespace {

constexpr uint64_t kSeed = 1;

// One rank's whole job; `report` gets a line describing what it did.
absl::Status RunRank(const reshard::DistSpec& src, const reshard::DistSpec& dst,
                     const reshard::Plan& plan, const reshard::LocalTensor& global,
                     reshard::Communicator& comm, std::string* report) {
  const std::vector<int64_t> coordinate = comm.coordinate();
  absl::StatusOr<reshard::LocalTensor> t = reshard::ShardOf(global, src, coordinate, kSeed);
  if (!t.ok()) return t.status();
  const std::string before = t->DebugString();

  reshard::ExecutionStats stats;
  absl::Status s = reshard::Redistribute(*t, src, dst, plan, comm, &stats);
  if (!s.ok()) return s;

  absl::StatusOr<reshard::LocalTensor> want = reshard::ShardOf(global, dst, coordinate, kSeed);
  if (!want.ok()) return want.status();
  // The plan only moves data (no reductions), so the result must be exact.
  absl::StatusOr<int64_t> bad = reshard::FirstMismatch(*t, *want, /*tolerance=*/0);
  if (!bad.ok()) return bad.status();
  if (*bad >= 0) {
    return absl::InternalError(absl::StrCat("rank ", comm.rank(), ": element ", *bad,
                                            " of its result differs from its shard of ",
                                            dst.state().ToString()));
  }
  *report = absl::StrCat("rank ", comm.rank(), ": ", before, " -> ", t->DebugString(), ", sent ",
                         stats.bytes_sent(), " bytes, received ", stats.bytes_received());
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "run_plan: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // --rank R --store DIR: this process is rank R; otherwise all ranks as threads.
  int64_t rank = -1;
  std::string store_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rank" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &rank)) {
      ++i;
    } else if (arg == "--store" && i + 1 < argc) {
      store_dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: run_plan [--rank R --store DIR]\n");
      return 2;
    }
  }
  if ((rank >= 0) != !store_dir.empty()) {
    std::fprintf(stderr, "run_plan: --rank and --store go together\n");
    return 2;
  }

  absl::StatusOr<reshard::DeviceMesh> mesh = reshard::DeviceMesh::Create({2, 2, 2});
  if (!mesh.ok()) return Fail(mesh.status());
  const std::vector<int64_t> shape = {13, 8};
  absl::StatusOr<reshard::DistSpec> src =
      reshard::DistSpec::Parse(*mesh, "S(0)[1]S(0)[0]R", shape, reshard::DType::kF32);
  if (!src.ok()) return Fail(src.status());
  absl::StatusOr<reshard::DistSpec> dst =
      reshard::DistSpec::Parse(*mesh, "RS(1)S(0)", shape, reshard::DType::kF32);
  if (!dst.ok()) return Fail(dst.status());
  // Every rank plans the same redistribution and gets the same plan.
  absl::StatusOr<reshard::Plan> plan =
      reshard::PlanRedistribution(*src, *dst, reshard::PlanOptions());
  if (!plan.ok()) return Fail(plan.status());
  const reshard::LocalTensor global =
      *reshard::TestTensor(reshard::DType::kF32, shape, kSeed, mesh->num_ranks());

  if (rank >= 0) {
    if (rank >= mesh->num_ranks()) {
      std::fprintf(stderr, "run_plan: --rank must be below %lld\n",
                   static_cast<long long>(mesh->num_ranks()));
      return 2;
    }
    // One process per rank: they meet through files in a shared directory.
    absl::StatusOr<std::unique_ptr<reshard::GlooCommunicator>> comm =
        reshard::GlooCommunicator::Connect(*mesh, rank, reshard::NewFileStore(store_dir),
                                           reshard::GlooOptions());
    if (!comm.ok()) return Fail(comm.status());
    std::string report;
    absl::Status s = RunRank(*src, *dst, *plan, global, **comm, &report);
    if (!s.ok()) return Fail(s);
    std::printf("%s\n", report.c_str());
    return 0;
  }

  std::printf("plan: %s\n", plan->Trace().c_str());
  std::vector<std::string> reports(mesh->num_ranks());
  std::vector<absl::Status> statuses = reshard::RunRanksOnThreads(
      *mesh, reshard::GlooOptions(), [&](reshard::GlooCommunicator& comm) {
        return RunRank(*src, *dst, *plan, global, comm, &reports[comm.rank()]);
      });
  absl::Status status = reshard::FirstError(statuses);
  if (!status.ok()) return Fail(status);
  for (const std::string& line : reports) std::printf("%s\n", line.c_str());
  std::printf("all %zu ranks hold their shard of %s\n", reports.size(),
              dst->state().ToString().c_str());
  return 0;
}
