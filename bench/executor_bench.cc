// Executor throughput on Gloo (Google Benchmark): each step type of spec §11
// run by Redistribute next to the raw Gloo call that moves the same bytes,
// so the executor's own overhead (planning checks, padding and packing
// copies, allocations) shows as the ratio of the two. See bench/README.md.
//
// Ranks are threads of this process on loopback TCP: the benchmark thread is
// rank 0 and times its loop; the other ranks run the same number of
// iterations in lock step (every call is a collective). Sizes are the bytes
// of each rank's input; bytes_per_second is the bytes each rank receives
// (ExecutionStats::bytes_received, identical for the raw call).
//
//   bazel run -c opt //bench:executor_bench -- --benchmark_filter=BM_
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "benchmark/benchmark.h"
#include "collectives/executor.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/stores/in_process_store.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/math.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"

namespace reshard {
namespace {

constexpr int64_t kRanks = 4;
constexpr int64_t kCols = 256;  // f32 rows of 1 KiB

enum class Step { kAllGather, kAllToAll, kAllReduce, kReduceScatter, kChunk };

// Source and destination layouts of each step on a 1-D mesh.
const char* SrcOf(Step s) {
  switch (s) {
    case Step::kAllGather:
    case Step::kAllToAll:
      return "S(0)";
    case Step::kAllReduce:
    case Step::kReduceScatter:
      return "P(sum)";
    case Step::kChunk:
      return "R";
  }
  return "";
}
const char* DstOf(Step s) {
  switch (s) {
    case Step::kAllGather:
    case Step::kAllReduce:
      return "R";
    case Step::kAllToAll:
      return "S(1)";
    case Step::kReduceScatter:
    case Step::kChunk:
      return "S(0)";
  }
  return "";
}

// The global shape whose source shard on one rank has `bytes` bytes.
std::vector<int64_t> GlobalShape(Step s, int64_t bytes) {
  const int64_t rows = bytes / (kCols * 4);
  const bool sharded = s == Step::kAllGather || s == Step::kAllToAll;
  return {sharded ? rows * kRanks : rows, kCols};
}

// One rank's work for one iteration, set up outside the timed loop.
struct RankWork {
  std::unique_ptr<GlooCommunicator> comm;
  std::vector<float> in, out, packed;  // zeros: sums stay 0, so no denormals or infinities
  HostCopyEngine engine;
  std::function<absl::Status()> run;
  int64_t bytes_received = 0;
};

// What to time: the executor, the raw Gloo call alone, or (all_to_all) the
// raw call plus the layout copy any S(0)->S(1) needs, which shows how much of
// the executor's time is that inherent copy rather than its own overhead.
enum class Mode { kExecutor, kRaw, kRawWithPack };

absl::Status Setup(RankWork& w, Step step, Mode mode, const DistSpec& src, const DistSpec& dst,
                   const Plan& plan) {
  const bool raw = mode != Mode::kExecutor;
  const std::vector<int64_t> local = src.LocalShape(w.comm->coordinate());
  const int64_t count = local[0] * local[1];
  w.in.assign(count, 0.0f);
  if (!raw) {
    // The executor allocates its results; it may reuse the input buffer as
    // scratch (all_reduce works in place), which a benchmark can allow.
    w.run = [&w, &src, &dst, &plan, local]() {
      LocalTensor t = LocalTensor::View(w.in.data(), DType::kF32, local, MemorySpace::kHost);
      ExecutionStats stats;
      absl::Status s = Redistribute(t, src, dst, plan, *w.comm, &stats);
      w.bytes_received = stats.bytes_received();
      return s;
    };
    return absl::OkStatus();
  }
  std::shared_ptr<gloo::Context> ctx = w.comm->group_context(MeshDimSet::Single(0));
  switch (step) {
    case Step::kAllGather:
      w.out.assign(count * kRanks, 0.0f);
      w.bytes_received = (kRanks - 1) * count * 4;
      w.run = [&w, ctx, count] {
        gloo::AllgatherOptions o(ctx);
        o.setInput(w.in.data(), count);
        o.setOutput(w.out.data(), count * kRanks);
        gloo::allgather(o);
        return absl::OkStatus();
      };
      break;
    case Step::kAllToAll:
      w.out.assign(count, 0.0f);
      w.packed.assign(count, 0.0f);
      w.bytes_received = (kRanks - 1) * count / kRanks * 4;
      w.run = [&w, ctx, count, local, pack = mode == Mode::kRawWithPack] {
        float* send = w.in.data();
        if (pack) {
          // Chunk j of the send buffer = columns [j*C/n, (j+1)*C/n) of every row.
          const std::vector<int64_t> chunk = {local[0], local[1] / kRanks};
          for (int64_t j = 0; j < kRanks; ++j) {
            absl::StatusOr<Copy2D> c = SlabCopy(local, chunk, 1, j * chunk[1], 0, chunk[1], 4);
            if (!c.ok()) return c.status();
            if (absl::Status s = w.engine.Copy(*c, w.packed.data() + j * count / kRanks, send);
                !s.ok()) {
              return s;
            }
          }
          send = w.packed.data();
        }
        gloo::AlltoallOptions o(ctx);
        o.setInput(send, count);
        o.setOutput(w.out.data(), count);
        gloo::alltoall(o);
        return absl::OkStatus();
      };
      break;
    case Step::kAllReduce:
    case Step::kReduceScatter:
      // Gloo's new-style API has no reduce-scatter; ours is its allreduce
      // plus taking this rank's chunk, so the raw call is that allreduce.
      w.bytes_received = step == Step::kAllReduce
                             ? 2 * (kRanks - 1) * ((count + kRanks - 1) / kRanks) * 4
                             : (kRanks - 1) * count / kRanks * 4;
      w.run = [&w, ctx, count] {
        gloo::AllreduceOptions o(ctx);
        o.setOutput(w.in.data(), count);
        o.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
        gloo::allreduce(o);
        return absl::OkStatus();
      };
      break;
    case Step::kChunk:
      // No communication: the raw equivalent is copying this rank's chunk.
      w.out.assign(count / kRanks, 0.0f);
      w.run = [&w, count] {
        std::memcpy(w.out.data(), w.in.data() + w.comm->rank() * (count / kRanks),
                    count / kRanks * 4);
        return absl::OkStatus();
      };
      break;
  }
  return absl::OkStatus();
}

void BM_Step(benchmark::State& state, Step step, Mode mode) {
  const int64_t bytes = state.range(0);
  const DeviceMesh mesh = *DeviceMesh::Create({kRanks});
  const std::vector<int64_t> shape = GlobalShape(step, bytes);
  const DistSpec src = *DistSpec::Parse(mesh, SrcOf(step), shape, DType::kF32);
  const DistSpec dst = *DistSpec::Parse(mesh, DstOf(step), shape, DType::kF32);
  const Plan plan = *PlanRedistribution(src, dst, PlanOptions{PlanMode::kPyTorch});

  std::shared_ptr<Store> store = NewInProcessStore();
  std::vector<RankWork> work(kRanks);
  const int64_t iterations = state.max_iterations;
  absl::Barrier* ready = new absl::Barrier(kRanks);  // deletes itself
  absl::Barrier* done = new absl::Barrier(kRanks);
  std::vector<absl::Status> setup(kRanks);
  auto prepare = [&](int64_t rank) {
    absl::StatusOr<std::unique_ptr<GlooCommunicator>> c =
        GlooCommunicator::Connect(mesh, rank, store, GlooOptions());
    setup[rank] = c.ok() ? absl::OkStatus() : c.status();
    if (c.ok()) {
      work[rank].comm = *std::move(c);
      setup[rank] = Setup(work[rank], step, mode, src, dst, plan);
      if (setup[rank].ok()) setup[rank] = work[rank].run();  // warm up (first allocations)
    }
    if (ready->Block()) delete ready;
  };
  std::vector<std::thread> peers;
  for (int64_t rank = 1; rank < kRanks; ++rank) {
    peers.emplace_back([&, rank] {
      prepare(rank);
      if (setup[rank].ok()) {
        for (int64_t i = 0; i < iterations; ++i) {
          if (!work[rank].run().ok()) break;
        }
      }
      if (done->Block()) delete done;  // keep connections until rank 0 is done
    });
  }
  prepare(0);
  bool ok = true;
  for (const absl::Status& s : setup) ok = ok && s.ok();
  if (!ok) {
    state.SkipWithError("setup failed");
  }
  for (auto _ : state) {
    if (!ok) break;
    absl::Status s = work[0].run();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  if (done->Block()) delete done;
  for (std::thread& t : peers) t.join();
  state.SetBytesProcessed(state.iterations() * work[0].bytes_received);
  state.counters["input_MiB"] = static_cast<double>(bytes) / (1 << 20);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t kib : {64, 1024, 4096, 16384}) b->Arg(kib * 1024);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Step, all_gather_executor, Step::kAllGather, Mode::kExecutor)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_gather_raw, Step::kAllGather, Mode::kRaw)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_to_all_executor, Step::kAllToAll, Mode::kExecutor)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_to_all_raw, Step::kAllToAll, Mode::kRaw)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_to_all_raw_with_pack, Step::kAllToAll, Mode::kRawWithPack)
    ->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_reduce_executor, Step::kAllReduce, Mode::kExecutor)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, all_reduce_raw, Step::kAllReduce, Mode::kRaw)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, reduce_scatter_executor, Step::kReduceScatter, Mode::kExecutor)
    ->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, reduce_scatter_raw, Step::kReduceScatter, Mode::kRaw)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, chunk_executor, Step::kChunk, Mode::kExecutor)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Step, chunk_raw, Step::kChunk, Mode::kRaw)->Apply(Sizes);

}  // namespace
}  // namespace reshard

BENCHMARK_MAIN();
