#include "harness/rank_result_bytes.h"

#include <cstring>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "planner/steps/step.h"

namespace reshard {
namespace {

// A placement as one small integer for the stats files: kind * 8 + arg.
int PlacementCode(Placement p) {
  const int arg = p.is_shard() ? p.dim() : p.is_partial() ? static_cast<int>(p.op()) : 0;
  return static_cast<int>(p.kind()) * 8 + arg;
}

std::optional<Placement> PlacementFromCode(int code) {
  const int arg = code % 8;
  switch (code / 8) {
    case 0:
      return arg == 0 ? std::optional<Placement>(Placement::Replicate()) : std::nullopt;
    case 1:
      return Placement::Shard(arg);
    case 2:
      if (arg < kNumReduceOps) return Placement::Partial(static_cast<ReduceOp>(arg));
      return std::nullopt;
  }
  return std::nullopt;
}

// A step's entries as "m:d,m:d" (mesh dim joins tensor dim), "-" for none.
std::string EntriesCode(const ShardEntries& entries) {
  std::vector<std::string> parts;
  for (int i = 0; i < entries.size(); ++i) {
    parts.push_back(absl::StrCat(entries.mesh_dim(i), ":", entries.tensor_dim(i)));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ",");
}

std::optional<ShardEntries> EntriesFromCode(const std::string& code) {
  ShardEntries entries;
  if (code == "-") return entries;
  for (absl::string_view part : absl::StrSplit(code, ',')) {
    std::pair<std::string, std::string> md = absl::StrSplit(part, ':');
    int m = 0, d = 0;
    if (!absl::SimpleAtoi(md.first, &m) || !absl::SimpleAtoi(md.second, &d) || m < 0 || m >= 16 ||
        d < 0 || d >= 16 || entries.size() >= ShardEntries::kMax) {
      return std::nullopt;
    }
    entries.Append(m, d);
  }
  return entries;
}

// "group kind src dst entries rails chunks sent received shape" (rails and
// chunks: Step::staging), e.g. "2 1 8 0 - 0 0 96 96 4,6".
std::string StatsLine(const StepStats& s) {
  return absl::StrCat(s.step.group.bits(), " ", static_cast<int>(s.step.kind), " ",
                      PlacementCode(s.step.src), " ", PlacementCode(s.step.dst), " ",
                      EntriesCode(s.step.entries), " ", s.step.staging.rails_per_host, " ",
                      s.step.staging.chunks, " ", s.bytes_sent, " ", s.bytes_received, " ",
                      absl::StrJoin(s.logical_shape, ","));
}

// The kind fits the placements: a one-rank group allows every kind a step
// may have (S -> P included); a permute or an exchange has no placements of
// its own.
bool KindFits(int kind, Placement from, Placement to) {
  if (kind >= 0 && kind < kNumStepKinds && MovesSlices(static_cast<StepKind>(kind))) {
    return from == Placement::Replicate() && to == Placement::Replicate();
  }
  return StepKindFor(from, to, /*group_size=*/1) == static_cast<StepKind>(kind);
}

absl::StatusOr<StepStats> ParseStatsLine(const std::string& line) {
  std::istringstream fields(line);
  int group = 0, kind = 0, src = 0, dst = 0;
  StepStats s;
  std::string entries, shape;
  RailStaging staging;
  fields >> group >> kind >> src >> dst >> entries >> staging.rails_per_host >> staging.chunks >>
      s.bytes_sent >> s.bytes_received >> shape;
  const std::optional<Placement> from = PlacementFromCode(src), to = PlacementFromCode(dst);
  const std::optional<ShardEntries> joins = EntriesFromCode(entries);
  if (fields.fail() || !from || !to || !joins || group <= 0 || group > 255 ||
      !KindFits(kind, *from, *to) || staging.rails_per_host < 0 || staging.chunks < 0) {
    return absl::DataLossError("bad stats line: " + line);
  }
  s.step = Step{MeshDimSet::FromBits(static_cast<uint8_t>(group)),
                static_cast<StepKind>(kind),
                *from,
                *to,
                *joins,
                staging};
  for (absl::string_view e : absl::StrSplit(shape, ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(e, &v)) return absl::DataLossError("bad stats line: " + line);
    s.logical_shape.push_back(v);
  }
  return s;
}

}  // namespace

std::string EncodeRankResult(const RankResult& r) {
  std::string stats;
  for (const StepStats& s : r.stats.steps) absl::StrAppend(&stats, StatsLine(s), "\n");
  return absl::StrCat(stats.size(), "\n", stats,
                      absl::string_view(static_cast<const char*>(r.tensor.data()),
                                        static_cast<size_t>(r.tensor.nbytes())));
}

absl::StatusOr<RankResult> DecodeRankResult(absl::string_view bytes, const PreparedCase& p,
                                            int64_t rank) {
  const size_t newline = bytes.find('\n');
  size_t stats_size = 0;
  if (newline == absl::string_view::npos ||
      !absl::SimpleAtoi(bytes.substr(0, newline), &stats_size) ||
      newline + 1 + stats_size > bytes.size()) {
    return absl::DataLossError(absl::StrCat("rank ", rank, ": malformed result"));
  }
  RankResult r;
  RESHARD_ASSIGN_OR_RETURN(
      r.tensor, LocalTensor::Zeros(p.dst.dtype(), p.dst.LocalShape(p.dst.mesh().Coordinate(rank))));
  const absl::string_view tensor = bytes.substr(newline + 1 + stats_size);
  if (tensor.size() != static_cast<size_t>(r.tensor.nbytes())) {
    return absl::DataLossError(absl::StrFormat("rank %d: the result has %d bytes, not %d", rank,
                                               tensor.size(), r.tensor.nbytes()));
  }
  if (!tensor.empty()) std::memcpy(r.tensor.data(), tensor.data(), tensor.size());
  for (absl::string_view line :
       absl::StrSplit(bytes.substr(newline + 1, stats_size), '\n', absl::SkipEmpty())) {
    RESHARD_ASSIGN_OR_RETURN(StepStats s, ParseStatsLine(std::string(line)));
    r.stats.steps.push_back(std::move(s));
  }
  return r;
}

}  // namespace reshard
