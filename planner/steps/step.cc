#include "planner/steps/step.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {

absl::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kAllToAll:
      return "all_to_all";
    case StepKind::kAllGather:
      return "all_gather";
    case StepKind::kAllReduce:
      return "all_reduce";
    case StepKind::kReduceScatter:
      return "reduce_scatter";
    case StepKind::kChunk:
      return "chunk";
    case StepKind::kPartition:
      return "partition";
    case StepKind::kPermute:
      return "permute";
    case StepKind::kExchange:
      return "exchange";
  }
  return "?";
}

std::optional<StepKind> StepKindFor(Placement src, Placement dst, int64_t group_size) {
  // On a group of one the single local value is the whole tensor under every
  // reduce op, so S -> P and P(x) -> P(y) move nothing (spec §8).
  if (group_size == 1 && src != dst && !src.is_replicate() && dst.is_partial()) {
    return StepKind::kPartition;
  }
  return StepKindFor(src, dst);
}

Step MakeStep(MeshDimSet group, Placement src, Placement dst) {
  return MakeGroupStep(group.ToVector(), src, dst);
}

Step MakeExchange(MeshDimSet group, absl::Span<const std::pair<int, int>> entries) {
  Step step{group, StepKind::kExchange, Placement::Replicate(), Placement::Replicate(),
            ShardEntries()};
  for (auto [m, d] : entries) step.entries.Append(m, d);
  return step;
}

std::vector<std::pair<int, Placement>> MovesOf(const Step& step) {
  std::vector<std::pair<int, Placement>> moves;
  MeshDimSet listed;
  for (int i = 0; i < step.entries.size(); ++i) {
    moves.emplace_back(step.entries.mesh_dim(i), Placement::Shard(step.entries.tensor_dim(i)));
    listed = listed.With(step.entries.mesh_dim(i));
  }
  for (int m : step.group.ToVector()) {
    if (!listed.Contains(m)) moves.emplace_back(m, Placement::Replicate());
  }
  return moves;
}

std::string Step::ToString() const {
  const std::string where = group.size() == 1 ? absl::StrCat("mesh dim ", group.First())
                                              : absl::StrCat("mesh dims ", group.ToString());
  if (MovesSlices(kind)) {
    std::string moves;
    for (const auto& [m, p] : MovesOf(*this)) absl::StrAppend(&moves, " ", m, "->", p.ToString());
    if (staging.staged()) {
      absl::StrAppend(&moves, " staged over rails of ", staging.rails_per_host, ", ",
                      staging.chunks, staging.chunks == 1 ? " chunk" : " chunks");
    }
    return absl::StrCat(StepKindName(kind), " on ", where, ":", moves);
  }
  std::string order;
  if (!entries.empty()) {
    std::vector<int> dims;
    for (int i = 0; i < entries.size(); ++i) dims.push_back(entries.mesh_dim(i));
    order = absl::StrCat(" as [", absl::StrJoin(dims, ","), "]");
  }
  return absl::StrCat(src.ToString(), "->", dst.ToString(), " ", StepKindName(kind), " on ", where,
                      order);
}

}  // namespace reshard
