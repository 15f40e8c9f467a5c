#include "formats/result_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/utf8.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "planner/steps/plan_limit.h"

namespace reshard {

using json = nlohmann::json;

// A JSON string literal: quotes, backslashes and control characters escaped,
// bytes that are not UTF-8 replaced (messages may quote raw input).
void AppendJsonString(absl::string_view text, std::string* out) {
  std::string valid;
  absl::string_view s = text;
  if (!IsValidUtf8(text)) s = valid = Utf8Valid(text);
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(out, absl::StrFormat("\\u%04x", static_cast<unsigned char>(c)));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendCost(double cost, std::string* out) {
  char buf[64];
  // Shortest round trip (C++17 <charconv>), like Python's repr.
  char* end = std::to_chars(buf, buf + sizeof(buf), cost).ptr;
  const bool integral = std::find_if(buf, end, [](char c) {
                          return c == '.' || c == 'e' || c == 'n';
                        }) == end;  // not inf/nan either
  out->append(buf, end);
  if (integral) out->append(".0");  // "2" -> "2.0"
}

std::string FormatCost(double cost) {
  std::string s;
  AppendCost(cost, &s);
  return s;
}

namespace {

// The placements of `group`'s mesh dims in `state`, in mesh-dim order
// ("S(0)S(1)"): a permute's or exchange's src and dst, whose Step::src and
// dst (Replicate) say nothing of what moves (issue 44).
std::string GroupPlacements(const DistState& state, MeshDimSet group) {
  std::string text;
  for (int m : group.ToVector()) absl::StrAppend(&text, state.placement(m).ToString());
  return text;
}

// One step's object, leaving `before` for `after`; keys beyond the compat
// ones (mesh_dims, order, moves) only for native steps, so compat results
// keep their exact text.
void AppendStepJson(const TransformInfo& info, const DistState& before, const DistState& after,
                    std::string* out) {
  const Step& step = info.step;
  const bool moves = MovesSlices(step.kind);  // a permute or an exchange
  absl::StrAppend(out, "{\"mesh_dim\":", step.mesh_dim(), ",\"src\":\"",
                  moves ? GroupPlacements(before, step.group) : step.src.ToString(),
                  "\",\"dst\":\"", moves ? GroupPlacements(after, step.group) : step.dst.ToString(),
                  "\",\"collective\":\"", StepKindName(step.kind), "\",\"logical_shape\":[",
                  absl::StrJoin(info.logical_shape, ","), "],\"cost\":", FormatCost(info.cost));
  if (step.group.size() > 1 || moves) {
    absl::StrAppend(out, ",\"mesh_dims\":[", absl::StrJoin(step.group.ToVector(), ","), "]");
  }
  std::vector<std::string> items;
  if (moves) {
    for (const auto& [m, p] : MovesOf(step)) {
      items.push_back(absl::StrCat("{\"mesh_dim\":", m, ",\"dst\":\"", p.ToString(), "\"}"));
    }
    absl::StrAppend(out, ",\"moves\":[", absl::StrJoin(items, ","), "]");
    if (step.staging.staged()) {  // spec §11.2
      absl::StrAppend(out, ",\"staging\":{\"rails_per_host\":", step.staging.rails_per_host,
                      ",\"chunks\":", step.staging.chunks, "}");
    }
  } else if (!step.entries.empty()) {
    for (int i = 0; i < step.entries.size(); ++i)
      items.push_back(absl::StrCat(step.entries.mesh_dim(i)));
    absl::StrAppend(out, ",\"order\":[", absl::StrJoin(items, ","), "]");
  }
  out->push_back('}');
}

}  // namespace

namespace {

// JSON has no inf or NaN: a plan whose cost overflowed is printed as an
// error. The planner refuses cost-model parameters that could overflow
// (spec §6.2); this is the last line of defence for models it cannot check.
absl::Status CheckFinite(const Plan& plan) {
  bool finite = std::isfinite(plan.cost);
  for (const TransformInfo& info : plan.steps) finite = finite && std::isfinite(info.cost);
  if (finite) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cost_model: the plan's cost is not finite (", FormatCost(plan.cost),
                   "); the cost model's parameters make a step's price overflow"));
}

}  // namespace

void AppendStepsJson(const Plan& plan, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendStepJson(plan.steps[i], plan.states[i], plan.states[i + 1], out);
  }
  out->push_back(']');
}

void AppendResultJson(const json& id, const absl::StatusOr<Plan>& plan, std::string* out) {
  if (plan.ok()) {
    if (absl::Status finite = CheckFinite(*plan); !finite.ok()) {
      return AppendResultJson(id, finite, out);
    }
  }
  absl::StrAppend(out, "{\"id\":", id.dump(), ",\"ok\":", plan.ok() ? "true" : "false");
  if (!plan.ok()) {
    absl::StrAppend(out, ",\"error\":");
    AppendJsonString(plan.status().message(), out);
    if (std::optional<PlanLimit> limit = PlanLimitOf(plan.status())) {
      absl::StrAppend(out, ",\"limit\":");
      AppendJsonString(PlanLimitField(*limit), out);
    }
    out->push_back('}');
    return;
  }
  absl::StrAppend(out, ",\"algorithm\":\"", AlgorithmName(plan->algorithm),
                  "\",\"cost\":", FormatCost(plan->cost), ",\"trace\":");
  AppendJsonString(plan->Trace(), out);
  absl::StrAppend(out, ",\"steps\":");
  AppendStepsJson(*plan, out);
  absl::StrAppend(out, ",\"mode\":\"", PlanModeName(plan->mode),
                  "\",\"peak_bytes\":", plan->peak_bytes, ",\"cost_model\":");
  AppendJsonString(plan->cost_model, out);
  if (!plan->not_optimal.empty()) {  // spec §5.2 item 9: only when a limit stopped the search
    absl::StrAppend(out, ",\"not_optimal\":");
    AppendJsonString(plan->not_optimal, out);
  }
  out->push_back('}');
}

}  // namespace reshard
