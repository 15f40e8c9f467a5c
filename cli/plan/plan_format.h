// How `reshard plan` prints a plan: a table for people, Graphviz for pictures.
// (The JSON form is formats/result_json.h's AppendResultJson, shared with `reshard batch`.)
#ifndef RESHARD_CLI_PLAN_PLAN_FORMAT_H_
#define RESHARD_CLI_PLAN_PLAN_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "planner/cross_mesh/cross_mesh_plan.h"
#include "planner/steps/plan.h"

namespace reshard {

// The trace, one row per step (step #, mesh dim(s), transition, collective,
// logical shape, cost), the total, the algorithm and mode used and the peak
// bytes per rank. `requested` is the
// algorithm asked for, mentioned when it differs from the one used.
std::string FormatPlanText(const Plan& plan, absl::string_view cost_model,
                           absl::string_view requested);

// A Graphviz digraph: the plan's states as nodes labelled in notation, each step
// an edge labelled with its collective, mesh dim(s), transition and cost; the
// graph's label names the mode, algorithm, cost and peak bytes.
std::string FormatPlanDot(const Plan& plan, absl::string_view cost_model);

// A cross-mesh plan (spec §14): the move in one line, the steps on the
// source mesh, the crossing (which rank sends which boxes to which, at most
// 32 pairs and "... N more", totals, its price), the steps on the
// destination mesh, the total cost ("not priced" for a model that prices no
// exchange) and the mode.
std::string FormatCrossMeshText(const CrossMeshPlan& plan, absl::string_view cost_model);

}  // namespace reshard

#endif  // RESHARD_CLI_PLAN_PLAN_FORMAT_H_
