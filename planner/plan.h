// A plan: the steps (TransformInfos) that turn one DistState into another
// (spec §10), with the states it passes through and its cost.
#ifndef RESHARD_PLANNER_PLAN_H_
#define RESHARD_PLANNER_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "planner/placement.h"

namespace reshard {

enum class Collective : uint8_t {
  kAllToAll,       // S(a) -> S(b)
  kAllGather,      // S(d) -> R
  kAllReduce,      // P(op) -> R
  kReduceScatter,  // P(op) -> S(d)
  kChunk,          // R -> S(d), local
  kPartition,      // R -> P(op), local
};

// "all_to_all", "all_gather", "all_reduce", "reduce_scatter", "chunk", "partition".
absl::string_view CollectiveName(Collective c);
// Whether src -> dst is a step on a mesh dim of `mesh_dim_size` ranks: one of
// the six above (spec §4), or S(d) -> P(op) on a size-1 mesh dim, where the
// single shard is the whole tensor and nothing moves (greedy plans, spec §8).
bool IsLegalStep(Placement src, Placement dst, int64_t mesh_dim_size);
// The collective for a legal step; S(d) -> P(op) (size-1 mesh dims only) is
// a partition.
Collective CollectiveFor(Placement src, Placement dst);
// True for chunk and partition, which move no data between ranks.
inline bool IsLocal(Collective c) { return c == Collective::kChunk || c == Collective::kPartition; }

// One step: mesh dim `mesh_dim` goes from `src` to `dst`.
struct TransformInfo {
  int mesh_dim = 0;
  Placement src;
  Placement dst;
  // The tensor as seen by the group along mesh_dim at this step, for the
  // rank the plan was made for (spec §10).
  std::vector<int64_t> logical_shape;
  double cost = 0;  // in the cost model's unit

  Collective collective() const { return CollectiveFor(src, dst); }
};

enum class Algorithm : uint8_t { kAuto, kGraph, kGreedy };
// "auto", "graph", "greedy".
absl::string_view AlgorithmName(Algorithm a);
// The inverse of AlgorithmName; nullopt for any other name.
std::optional<Algorithm> ParseAlgorithm(absl::string_view name);

struct Plan {
  Algorithm algorithm = Algorithm::kGraph;  // the planner actually used (never kAuto)
  // Notation of every state from source to destination (steps.size() + 1).
  std::vector<std::string> states;
  std::vector<TransformInfo> steps;
  double cost = 0;  // sum of the steps' costs
  // Graph planner only: how many states the search expanded.
  int64_t expanded_states = 0;

  // The states joined by "->" (spec §3), e.g. "S(0)R->RR->RS(0)".
  std::string Trace() const;
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_PLAN_H_
