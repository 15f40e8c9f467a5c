#include "planner/plan.h"

#include <cassert>

#include "absl/strings/str_join.h"

namespace reshard {

absl::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kAllGather: return "all_gather";
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kChunk: return "chunk";
    case Collective::kPartition: return "partition";
  }
  return "?";
}

bool IsLegalStep(Placement src, Placement dst, int64_t mesh_dim_size) {
  if (src == dst) return false;
  if (src.is_partial() && dst.is_partial()) return false;  // P(x) -> P(y): spec §4
  if (src.is_shard() && dst.is_partial()) return mesh_dim_size == 1;  // spec §8
  return true;
}

Collective CollectiveFor(Placement src, Placement dst) {
  // Spec §10 names, keyed by the kinds at both ends.
  if (src.is_shard()) {
    if (dst.is_partial()) return Collective::kPartition;  // size-1 mesh dims only (spec §8)
    return dst.is_shard() ? Collective::kAllToAll : Collective::kAllGather;
  }
  if (src.is_partial()) {
    assert(!dst.is_partial());  // P(x) -> P(y) is never a step (spec §4)
    return dst.is_shard() ? Collective::kReduceScatter : Collective::kAllReduce;
  }
  assert(!dst.is_replicate());  // R -> R is not a step
  return dst.is_shard() ? Collective::kChunk : Collective::kPartition;
}

absl::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kGraph: return "graph";
    case Algorithm::kGreedy: return "greedy";
  }
  return "?";
}

std::optional<Algorithm> ParseAlgorithm(absl::string_view name) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kGraph, Algorithm::kGreedy}) {
    if (name == AlgorithmName(a)) return a;
  }
  return std::nullopt;
}

std::string Plan::Trace() const { return absl::StrJoin(states, "->"); }

}  // namespace reshard
