// The CUDA copy engine's pad, trim and chunk copies (collectives/
// cuda_copy_engine.h, through the slab helpers of local_tensor.h as the
// executor calls them) against one cudaMemcpyAsync of the same bytes, in
// GB/s of bytes written. GPU time from CUDA events around each iteration, the
// output's stream-ordered allocation included (as in the executor), and the
// stream synchronised after each, as a caller does between plans. The copy
// engine's second argument is its pool: 1 its own (the default), 0 the
// device's default pool with CUDA's default release threshold. Strided rows
// are copied by CopyStridedRows (collectives/nccl/strided_copy.h);
// BM_CudaMemcpy2DSameRows is the same rows on the copy engines and
// BM_KernelSameRows on the kernel alone, neither allocating.
//
//   bazel run -c opt --config=cuda //bench:cuda_copy_bench      (needs a GPU)
//   scripts/gpu-test --bench                                    (the same)
//
// Results: bench/README.md, "Current results". Without
// --config=cuda this is a main() that says so.
#include <cstdio>

#ifdef RESHARD_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/nccl/strided_copy.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/chunk.h"

namespace reshard {
namespace {

// One executor copy: pad or trim `dim` to `length`, or take chunk 1 of 4
// along it (torch.chunk sizes). The first seven are the cases the engine was
// tuned on; the rest vary the row width (8 B to 8 MB), the dtype and the
// alignment, so that no vector width or block shape is left unmeasured.
struct Case {
  const char* name;
  std::vector<int64_t> shape;
  int dim;
  enum Kind { kResize, kChunk } kind;
  int64_t length;  // kResize: the new length
  DType dtype = DType::kF32;
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {"pad rows (contiguous)", {4000, 4096}, 0, Case::kResize, 4096},
      {"pad columns (2-D)", {4096, 4000}, 1, Case::kResize, 4096},
      {"trim rows (contiguous)", {4096, 4096}, 0, Case::kResize, 4000},
      {"trim columns (2-D)", {4096, 4096}, 1, Case::kResize, 4000},
      {"chunk 1 of 4, rows (contiguous)", {4096, 4096}, 0, Case::kChunk, 0},
      {"chunk 1 of 4, columns (2-D)", {4096, 4096}, 1, Case::kChunk, 0},
      {"chunk 1 of 4, middle dim (2-D)", {64, 4096, 64}, 1, Case::kChunk, 0},
      {"chunk 1 of 4, last dim of 8 (8 B rows)", {1 << 20, 8}, 1, Case::kChunk, 0},
      {"chunk 1 of 4, last dim of 6, f64 (16 B rows)",
       {1 << 18, 6},
       1,
       Case::kChunk,
       0,
       DType::kF64},
      {"chunk 1 of 4, bf16 columns of 1001 (502 B rows)",
       {8191, 1001},
       1,
       Case::kChunk,
       0,
       DType::kBF16},
      {"pad columns 4099 -> 4100 (uneven)", {4097, 4099}, 1, Case::kResize, 4100},
      {"trim middle dim 3 -> 2 (8 MB rows)", {16, 3, 1 << 20}, 1, Case::kResize, 2},
      {"chunk 1 of 4, columns, 64 x 64 (small)", {64, 64}, 1, Case::kChunk, 0},
      {"chunk 1 of 4, bf16 columns of 50257 (25130 B rows)",
       {512, 50257},
       1,
       Case::kChunk,
       0,
       DType::kBF16},
  };
  return *cases;
}

absl::StatusOr<LocalTensor> RunCase(CudaCopyEngine& engine, const LocalTensor& in, const Case& c) {
  if (c.kind == Case::kResize) return Resize(engine, in, c.dim, c.length);
  const int64_t L = c.shape[c.dim];
  return TakeSlab(engine, in, c.dim, ChunkOffset(L, 4, 1), ChunkSize(L, 4, 1));
}

// The CUDA state of one benchmark: a stream, the engine, events.
struct Gpu {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Gpu() {
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Gpu() {
    cudaStreamSynchronize(stream);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  // Seconds between the events, once `stop` has happened.
  double Elapsed() {
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return ms / 1e3;
  }
};

void BM_CopyEngine(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  const bool own_pool = state.range(1) != 0;
  state.SetLabel(absl::StrCat(c.name, own_pool ? ", own pool" : ", device pool"));
  Gpu gpu;
  absl::StatusOr<CudaCopyEngine> engine =
      CudaCopyEngine::Create(gpu.stream, CudaCopyEngineOptions{own_pool});
  if (!engine.ok()) return state.SkipWithError(std::string(engine.status().message()).c_str());
  absl::StatusOr<LocalTensor> in = engine->Allocate(c.dtype, c.shape);
  if (!in.ok()) return state.SkipWithError("allocation failed");
  cudaMemsetAsync(in->data(), 1, static_cast<size_t>(in->nbytes()), gpu.stream);
  int64_t bytes = 0;
  for (auto _ : state) {
    cudaEventRecord(gpu.start, gpu.stream);
    absl::StatusOr<LocalTensor> out = RunCase(*engine, *in, c);
    if (!out.ok()) return state.SkipWithError(std::string(out.status().message()).c_str());
    bytes = out->nbytes();
    out = LocalTensor();  // freed on the stream, inside the timed region
    cudaEventRecord(gpu.stop, gpu.stream);
    state.SetIterationTime(gpu.Elapsed());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// The case's copy as rows: those outside `dim`, each the bytes kept along
// `dim` and after it.
struct Rows {
  size_t src_pitch, dst_pitch, width, height;
};
Rows RowsOf(const Case& c) {
  int64_t rows = 1, inner = ItemSize(c.dtype);
  for (int d = 0; d < c.dim; ++d) rows *= c.shape[d];
  for (size_t d = c.dim + 1; d < c.shape.size(); ++d) inner *= c.shape[d];
  const int64_t kept = c.kind == Case::kResize ? c.length : ChunkSize(c.shape[c.dim], 4, 1);
  const auto src_pitch = static_cast<size_t>(c.shape[c.dim] * inner);
  const auto dst_pitch = static_cast<size_t>(kept * inner);
  return {src_pitch, dst_pitch, std::min(src_pitch, dst_pitch), static_cast<size_t>(rows)};
}

// One cudaMemcpyAsync of as many bytes as the case writes (its rows at the
// destination's pitch).
void BM_CudaMemcpySameBytes(benchmark::State& state) {
  const Case& c = Cases()[state.range(0)];
  state.SetLabel(c.name);
  Gpu gpu;
  const Rows r = RowsOf(c);
  const size_t bytes = r.dst_pitch * r.height;
  void* src = nullptr;
  void* dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    return state.SkipWithError("cudaMalloc failed");
  }
  cudaMemsetAsync(src, 1, bytes, gpu.stream);
  for (auto _ : state) {
    cudaEventRecord(gpu.start, gpu.stream);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, gpu.stream);
    cudaEventRecord(gpu.stop, gpu.stream);
    state.SetIterationTime(gpu.Elapsed());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  cudaFree(src);
  cudaFree(dst);
}

// The case's rows copied by `copy` (cudaMemcpy2DAsync's arguments), into
// buffers allocated once.
template <typename CopyFn>
void SameRows(benchmark::State& state, CopyFn copy) {
  const Case& c = Cases()[state.range(0)];
  state.SetLabel(c.name);
  Gpu gpu;
  const Rows r = RowsOf(c);
  void* src = nullptr;
  void* dst = nullptr;
  if (cudaMalloc(&src, r.src_pitch * r.height) != cudaSuccess ||
      cudaMalloc(&dst, r.dst_pitch * r.height) != cudaSuccess) {
    return state.SkipWithError("cudaMalloc failed");
  }
  cudaMemsetAsync(src, 1, r.src_pitch * r.height, gpu.stream);
  for (auto _ : state) {
    cudaEventRecord(gpu.start, gpu.stream);
    if (copy(dst, r.dst_pitch, src, r.src_pitch, r.width, r.height, gpu.stream) != cudaSuccess) {
      return state.SkipWithError("the copy failed");
    }
    cudaEventRecord(gpu.stop, gpu.stream);
    state.SetIterationTime(gpu.Elapsed());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(r.width * r.height));
  cudaFree(src);
  cudaFree(dst);
}

// One cudaMemcpy2DAsync on the copy engines: what the engine called for
// strided rows before it had its own kernel.
void BM_CudaMemcpy2DSameRows(benchmark::State& state) {
  SameRows(state, [](void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h,
                     cudaStream_t stream) {
    return cudaMemcpy2DAsync(dst, dp, src, sp, w, h, cudaMemcpyDeviceToDevice, stream);
  });
}

// The kernel alone, whatever the alignment (CopyStridedRows sends wide rows
// not 4-byte aligned to cudaMemcpy2DAsync instead).
void BM_KernelSameRows(benchmark::State& state) { SameRows(state, &CopyStridedRowsOnCores); }

void AllCases(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(Cases().size()); ++i) b->Arg(i);
  b->UseManualTime();
}

// Each case with the engine's own pool, then the device's.
void AllCasesBothPools(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(Cases().size()); ++i) {
    b->Args({i, 1});
    b->Args({i, 0});
  }
  b->UseManualTime();
}

BENCHMARK(BM_CopyEngine)->Apply(AllCasesBothPools);
BENCHMARK(BM_CudaMemcpySameBytes)->Apply(AllCases);
BENCHMARK(BM_CudaMemcpy2DSameRows)->Apply(AllCases);
BENCHMARK(BM_KernelSameRows)->Apply(AllCases);

}  // namespace
}  // namespace reshard

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "cuda_copy_bench: no usable CUDA device; it needs a GPU\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
#else
int main() {
  std::fprintf(stderr, "cuda_copy_bench: built without --config=cuda; nothing to measure\n");
  return 1;
}
#endif
