// A verify case: one redistribution (mesh, shape, dtype, src, dst, planner,
// mode) plus a data seed, as `reshard verify` takes it on the command line,
// and the generator of random ones (`reshard verify --random`).
//
//   VerifyCase c = RandomCase(/*seed=*/7, /*max_ranks=*/8);
//   std::cerr << c.CommandLine();  // "reshard verify --mesh 2,2 ..."
#ifndef RESHARD_HARNESS_VERIFY_CASE_H_
#define RESHARD_HARNESS_VERIFY_CASE_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "planner/layout/dist_state.h"
#include "planner/planner.h"

namespace reshard {

struct VerifyCase {
  std::vector<int64_t> mesh;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  std::string src;
  std::string dst;
  Algorithm algorithm = Algorithm::kAuto;
  // kPyTorch (compat steps, spec §4) or kNative (group steps and permutes,
  // spec §4.2, with the native default cost model).
  PlanMode mode = PlanMode::kPyTorch;
  uint64_t data_seed = 0;

  // The flags that run this case alone, e.g. "--mesh 2,2 --shape 13,8
  // --dtype f32 --src 'S(0)R' --dst 'RS(1)' --algorithm graph --mode native
  // --seed 5".
  std::string Flags() const;
  // "reshard verify " + Flags(): a line to paste back into a shell.
  std::string CommandLine() const;
};

// A random case, deterministic in `seed`: meshes of 1 to 4 dims with at most
// `max_ranks` ranks (size-1 dims included), tensors of 1 to 4 dims small
// enough for uneven and zero-size shards, random shard orders, every
// placement kind, every dtype and reduce op (one op per case, or sum+avg),
// graph, greedy and auto planners. In native mode the graph and auto
// planners only, and layouts biased to what native steps do: more Shard
// mesh dims; a quarter of the destinations the source with its Shard mesh
// dims rearranged (orders reversed, tensor dims swapped), which permutes
// move, a quarter with several mesh dims (and every Partial) collapsed
// into one placement, which one collective over them does, and a quarter of
// Shard and Replicate layouts without Partials, which exchanges move.
VerifyCase RandomCase(uint64_t seed, int64_t max_ranks, PlanMode mode = PlanMode::kPyTorch);

// The generator's pieces, shared with random cross-mesh cases
// (harness/cross_mesh_case.h):
// every dtype a random case may have;
inline constexpr DType kRandomDTypes[] = {DType::kF64,  DType::kF32, DType::kF16,
                                          DType::kBF16, DType::kI64, DType::kI32,
                                          DType::kI16,  DType::kI8,  DType::kU8};
// one random placement per mesh dim (`shards` of 8 Shard, the rest
// Replicate or Partial with an op of `ops`) and random orders where a
// tensor dim is sharded more than once.
DistState RandomState(std::mt19937_64& rng, int mesh_ndim, int tensor_ndim,
                      const std::vector<ReduceOp>& ops, int shards = 4);

}  // namespace reshard

#endif  // RESHARD_HARNESS_VERIFY_CASE_H_
