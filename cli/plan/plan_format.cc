#include "cli/plan/plan_format.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "formats/cross_mesh_json.h"
#include "formats/result_json.h"

namespace reshard {
namespace {

std::string Unit(absl::string_view cost_model) {
  if (cost_model == "pytorch" || cost_model == "alpha-beta" || cost_model == "nccl" ||
      cost_model == "measured") {
    return " us";
  }
  return "";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string Pad(absl::string_view s, size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

// "1" for one mesh dim, "0,1" for a group.
std::string MeshDimsText(const Step& s) { return absl::StrJoin(s.group.ToVector(), ","); }

// "S(0) -> R"; a group entering Shard in an order: "R -> S(0) as [1,0]"; a
// permute or an exchange: its moves, "0->S(1) 1->S(0)", "1->S(0) 0->R"
// (step.h, MovesOf).
std::string TransitionText(const Step& s) {
  std::vector<std::string> moves;
  if (MovesSlices(s.kind)) {
    for (const auto& [m, p] : MovesOf(s)) moves.push_back(absl::StrCat(m, "->", p.ToString()));
    return absl::StrJoin(moves, " ");
  }
  for (int i = 0; i < s.entries.size(); ++i) moves.push_back(absl::StrCat(s.entries.mesh_dim(i)));
  std::string out = absl::StrCat(s.src.ToString(), " -> ", s.dst.ToString());
  if (moves.size() > 1) absl::StrAppend(&out, " as [", absl::StrJoin(moves, ","), "]");
  return out;
}

// The step's kind, and how it is staged over rails (spec §11.2): "permute
// staged over rails (2 chunks)".
std::string CollectiveText(const Step& s) {
  if (!s.staging.staged()) return std::string(StepKindName(s.kind));
  return absl::StrCat(StepKindName(s.kind), " staged over rails (", s.staging.chunks,
                      s.staging.chunks == 1 ? " chunk)" : " chunks)");
}

// One row per step (step #, mesh dim(s), transition, collective, logical
// shape, cost), columns aligned.
void AppendStepTable(const Plan& plan, std::string* out) {
  std::vector<std::vector<std::string>> rows = {
      {"step", "mesh dim", "transition", "collective", "logical shape", "cost"}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const TransformInfo& info = plan.steps[i];
    const Step& s = info.step;
    rows.push_back({absl::StrCat(i + 1), MeshDimsText(s), TransitionText(s), CollectiveText(s),
                    ShapeText(info.logical_shape), FormatCost(info.cost)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&line, c + 1 < row.size() ? Pad(row[c], width[c] + 2) : row[c]);
    }
    absl::StrAppend(out, line, "\n");
  }
}

// "0-7", "8,9", "0-3,8-11": runs of three or more as ranges.
std::string RanksText(const std::vector<int64_t>& ranks) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j >= i + 2) {
      parts.push_back(absl::StrCat(ranks[i], "-", ranks[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(absl::StrCat(ranks[k]));
    }
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

// "[0:4, 6:12]": per tensor dim, begin:end.
std::string BoxText(const Box& box) {
  std::vector<std::string> dims;
  for (const Slice& s : box) dims.push_back(absl::StrCat(s.offset, ":", s.offset + s.size));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Why a crossing takes several rounds (CrossMeshPlan::RoundsFor).
const char* RoundsReason(const CrossMeshPlan& plan) {
  const absl::string_view why = plan.RoundsFor();
  if (why == "rails") {
    return "in which ranks of the receiving hosts pass on, over NVLink, what an earlier round "
           "brought through their NICs";
  }
  if (why == "relaying") {
    return "in which destination ranks pass on what an earlier round brought them";
  }
  return "to keep every rank under the memory limit";
}

std::string PriceText(const std::optional<double>& cost, absl::string_view cost_model) {
  if (cost.has_value()) return absl::StrCat(FormatCost(*cost), Unit(cost_model));
  return absl::StrCat("not priced (cost model ", cost_model, " prices no exchange)");
}

// "before, on the source mesh: ..." and its steps, if any.
void AppendPart(absl::string_view title, const Plan& plan, std::string* out) {
  if (plan.steps.empty()) {
    absl::StrAppend(out, title, ": no steps\n");
    return;
  }
  absl::StrAppend(out, title, ": ", plan.Trace(), "\n");
  AppendStepTable(plan, out);
}

// Which rank sends what to whom, at most kMaxPairLines pairs, then totals.
constexpr size_t kMaxPairLines = 32;
void AppendCrossing(const CrossMeshPlan& plan, absl::string_view cost_model, std::string* out) {
  absl::StrAppend(out, "crossing: ", plan.crossing_src.state().ToString(), " -> ",
                  plan.crossing_dst.state().ToString(), ", ",
                  plan.rounds == 1 ? "one exchange" : absl::StrCat(plan.rounds, " rounds"),
                  " over ", plan.participants.size(), " ranks (", RanksText(plan.participants),
                  ")\n");
  const std::vector<CrossingPair> pairs = CrossingPairs(plan);
  for (size_t i = 0; i < pairs.size() && i < kMaxPairLines; ++i) {
    std::vector<std::string> boxes;
    for (size_t k = 0; k < pairs[i].boxes.size(); ++k) {
      // Spec §14 "Memory": with rounds, which exchange moves each slice.
      boxes.push_back(
          absl::StrCat(BoxText(pairs[i].boxes[k]),
                       plan.rounds == 1 ? "" : absl::StrCat(" (round ", pairs[i].rounds[k], ")")));
    }
    absl::StrAppend(out, "  rank ", pairs[i].src, " -> rank ", pairs[i].dst, ": ", pairs[i].bytes,
                    " bytes ", absl::StrJoin(boxes, " "), "\n");
  }
  if (pairs.size() > kMaxPairLines) {
    absl::StrAppend(out, "  ... ", pairs.size() - kMaxPairLines, " more\n");
  }
  const std::vector<int64_t> sent = plan.BytesSent();
  const std::vector<int64_t> bound = plan.ReceiveLowerBoundBytes();
  int64_t total = 0;
  for (int64_t b : sent) total += b;
  absl::StrAppend(out, "  ", pairs.size(), " pairs, ", plan.routes.size(),
                  " slices (local copies included); ", total, " bytes sent, at most ",
                  sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end()),
                  " by one rank; the most any rank must receive: ",
                  bound.empty() ? 0 : *std::max_element(bound.begin(), bound.end()), " bytes\n");
  if (plan.rounds > 1) {
    absl::StrAppend(out, "  ", plan.rounds, " rounds, each one exchange, ", RoundsReason(plan),
                    "\n");
  }
  absl::StrAppend(out, "  cost: ", PriceText(plan.crossing_cost, cost_model), "\n");
}

// A DOT double-quoted string's contents.
std::string DotEscape(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}});
}

}  // namespace

std::string FormatPlanText(const Plan& plan, absl::string_view cost_model,
                           absl::string_view requested) {
  std::string out = absl::StrCat("trace: ", plan.Trace(), "\n\n");
  if (plan.steps.empty()) {
    absl::StrAppend(&out, "no steps: the source already is the destination\n\n");
  } else {
    AppendStepTable(plan, &out);
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "total cost: ", FormatCost(plan.cost), Unit(cost_model), " (cost model ",
                  cost_model, ")\n");
  absl::StrAppend(&out, "algorithm:  ", AlgorithmName(plan.algorithm));
  if (requested != AlgorithmName(plan.algorithm)) {
    absl::StrAppend(&out, " (requested ", requested, ")");
  }
  if (plan.algorithm == Algorithm::kGraph) {
    absl::StrAppend(&out, ", ", plan.expanded_states, " states expanded");
  }
  absl::StrAppend(&out, "\nmode:       ", PlanModeName(plan.mode),
                  "\npeak bytes: ", plan.peak_bytes,
                  " per rank (the most any rank holds at once)\n");
  if (!plan.not_optimal.empty()) {
    absl::StrAppend(&out, "note:       this plan may not be optimal: ", plan.not_optimal, "\n");
  }
  return out;
}

std::string FormatPlanDot(const Plan& plan, absl::string_view cost_model) {
  std::string out = "digraph plan {\n  rankdir=TB;\n";
  absl::StrAppend(&out, "  label=\"", PlanModeName(plan.mode), " mode, ",
                  AlgorithmName(plan.algorithm), " plan, cost ", FormatCost(plan.cost),
                  Unit(cost_model), " (", DotEscape(cost_model), "), peak ", plan.peak_bytes,
                  " bytes per rank\\npriced by ", DotEscape(plan.cost_model),
                  "\";\n  labelloc=t;\n");
  absl::StrAppend(&out, "  node [shape=box, fontname=\"Courier\"];\n");
  // One node per position: a plan never needs to revisit a state, but node
  // identity by position keeps the picture a chain even if one did.
  const std::vector<std::string> states = plan.StateTexts();
  for (size_t i = 0; i < states.size(); ++i) {
    bool end = i == 0 || i + 1 == states.size();
    absl::StrAppend(&out, "  s", i, " [label=\"", DotEscape(states[i]), "\"",
                    end ? ", style=bold" : "", "];\n");
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i].step;
    absl::StrAppend(&out, "  s", i, " -> s", i + 1, " [label=\"", StepKindName(s.kind),
                    s.group.size() > 1 ? "\\nmesh dims " : "\\nmesh dim ", MeshDimsText(s), ": ",
                    DotEscape(TransitionText(s)), "\\ncost ", FormatCost(plan.steps[i].cost),
                    "\"];\n");
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

std::string FormatCrossMeshText(const CrossMeshPlan& plan, absl::string_view cost_model) {
  // The move's two ends: what `before` starts from and `after` ends in.
  const DistState& src =
      plan.before.states.empty() ? plan.crossing_src.state() : plan.before.states.front();
  const DistState& dst =
      plan.after.states.empty() ? plan.crossing_dst.state() : plan.after.states.back();
  std::string out = absl::StrCat(
      "cross-mesh move: ", src.ToString(), " on mesh ", plan.crossing_src.mesh().ToString(),
      " (ranks ", RanksText(plan.src_ranks), ") -> ", dst.ToString(), " on mesh ",
      plan.crossing_dst.mesh().ToString(), " (ranks ", RanksText(plan.dst_ranks), ")\n\n");
  AppendPart("before, on the source mesh", plan.before, &out);
  AppendCrossing(plan, cost_model, &out);
  AppendPart("after, on the destination mesh", plan.after, &out);
  absl::StrAppend(&out, "\ntotal cost: ", PriceText(plan.cost, cost_model));
  if (plan.cost.has_value()) absl::StrAppend(&out, " (cost model ", cost_model, ")");
  absl::StrAppend(&out, "\nmode:       ", PlanModeName(plan.before.mode),
                  "\npeak bytes: ", plan.peak_bytes,
                  " per rank (the most any rank holds at once, spec §14)\n");
  return out;
}

}  // namespace reshard
