// reshard costs: the cost of every (source, target) pair of a list of layouts,
// as JSON lines (CostMatrix, planner/cost_matrix.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/bounded_input.h"
#include "base/status_macros.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/request_flags.h"
#include "formats/layout_list.h"
#include "formats/request_fields.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "planner/cost_matrix.h"
#include "planner/costs/cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

// 1024 layouts: a matrix of a million costs (~20 MB of output).
constexpr int64_t kDefaultMaxPairs = 1 << 20;

absl::StatusOr<int64_t> PositiveFlag(const FlagValues& flags, const char* name, int64_t fallback) {
  if (!flags.Has(name)) return fallback;
  absl::StatusOr<int64_t> n = ParseInt(name, flags.Get(name));
  if (!n.ok()) return n.status();
  if (*n < 1) return absl::InvalidArgumentError(absl::StrCat("--", name, ": must be at least 1"));
  return *n;
}

// Everything but the layouts, validated; errors name the flag.
struct CostsRequest {
  DeviceMesh mesh;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  CostMatrixOptions options;
};

absl::StatusOr<CostsRequest> RequestFromFlags(const FlagValues& flags) {
  for (const char* required : {"mesh", "shape", "layouts"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard costs --help)"));
    }
  }
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseIntList("mesh", flags.Get("mesh")));
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
  if (!mesh.ok())
    return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
  CostsRequest r{*mesh, {}, DType::kF32, CostMatrixOptions()};
  RESHARD_ASSIGN_OR_RETURN(r.shape, ParseIntList("shape", flags.Get("shape")));
  absl::StatusOr<DType> dtype = ParseDType(flags.Get("dtype", "f32"));
  if (!dtype.ok())
    return absl::InvalidArgumentError(absl::StrCat("--dtype: ", dtype.status().message()));
  r.dtype = *dtype;
  if (absl::StatusOr<DistSpec> s =
          DistSpec::Create(r.mesh, DistState(r.mesh.ndim()), r.shape, r.dtype);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--shape: ", s.status().message()));
  }
  RESHARD_ASSIGN_OR_RETURN(int64_t per_host, PositiveFlag(flags, "devices-per-host", 8));
  // Mode and model as `reshard plan` takes them (native unless a pytorch
  // model or --mode pytorch is named).
  RequestFields model;
  model.mode = flags.Get("mode");
  model.cost_model = flags.Get("cost-model");
  model.devices_per_host = per_host;
  model.profile = flags.Get("profile");
  PlanOptions options;  // its rules are checked by CostMatrix
  RESHARD_RETURN_IF_ERROR(OptionsFromFields(model, FieldStyle::kFlag, nullptr, &options));
  r.options.mode = options.mode;
  r.options.cost_model = options.cost_model;
  RESHARD_ASSIGN_OR_RETURN(int64_t threads, PositiveFlag(flags, "threads", 0));
  r.options.threads = static_cast<int>(std::min<int64_t>(threads, 1024));
  RESHARD_ASSIGN_OR_RETURN(r.options.max_expanded_states,
                           PositiveFlag(flags, "max-states", r.options.max_expanded_states));
  RESHARD_ASSIGN_OR_RETURN(r.options.max_search_edges,
                           PositiveFlag(flags, "max-edges", r.options.max_search_edges));
  return r;
}

// One row's costs, and why each missing one is missing.
struct Row {
  std::vector<std::optional<double>> costs;
  std::vector<std::pair<size_t, absl::Status>> errors;  // (target, reason)
};

// Rows [begin, end): one CostMatrix call; when it fails (a pair over a
// bound), pair by pair, so that every other pair still gets its cost and a
// failed one its own reason (issue 19).
std::vector<Row> Rows(const CostsRequest& r, const std::vector<DistState>& layouts, size_t begin,
                      size_t end) {
  absl::Span<const DistState> all(layouts);
  std::vector<Row> rows(end - begin);
  absl::StatusOr<CostMatrixResult> block =
      CostMatrix(r.mesh, r.shape, r.dtype, all.subspan(begin, end - begin), all, r.options);
  for (size_t i = begin; i < end; ++i) {
    Row& row = rows[i - begin];
    if (block.ok()) {
      row.costs = std::move((*block)[i - begin]);
      continue;
    }
    row.costs.assign(layouts.size(), std::nullopt);
    for (size_t j = 0; j < layouts.size(); ++j) {
      absl::StatusOr<CostMatrixResult> one =
          CostMatrix(r.mesh, r.shape, r.dtype, all.subspan(i, 1), all.subspan(j, 1), r.options);
      if (one.ok()) {
        row.costs[j] = (*one)[0][0];
      } else {
        row.errors.emplace_back(j, one.status());
      }
    }
  }
  return rows;
}

// {"src":i,"costs":[...]}, null where no plan exists; with "errors":
// [{"dst":j,"error":"...","limit":"max_search_edges"}] for the nulls that
// have a reason ("limit" when it is a limit hit).
void PrintRow(size_t i, const Row& row) {
  std::string out;
  absl::StrAppend(&out, "{\"src\":", i, ",\"costs\":[");
  for (size_t j = 0; j < row.costs.size(); ++j) {
    if (j > 0) out += ',';
    if (row.costs[j]) {
      AppendCost(*row.costs[j], &out);
    } else {
      out += "null";
    }
  }
  out += "]";
  if (!row.errors.empty()) {
    out += ",\"errors\":[";
    for (size_t k = 0; k < row.errors.size(); ++k) {
      const absl::Status& why = row.errors[k].second;
      absl::StrAppend(&out, k ? "," : "", "{\"dst\":", row.errors[k].first, ",\"error\":");
      AppendJsonString(InFrontEndTerms(why, FieldStyle::kFlag).message(), &out);
      if (std::optional<PlanLimit> limit = PlanLimitOf(why)) {
        out += ",\"limit\":";
        AppendJsonString(PlanLimitField(*limit), &out);
      }
      out += "}";
    }
    out += "]";
  }
  out += "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

// Progress on stderr, at most once a second and only once a run has taken
// a second: the share done, pairs per second, the time left at that rate.
class Progress {
 public:
  explicit Progress(size_t pairs)
      : pairs_(static_cast<double>(pairs)), start_(absl::Now()), last_(start_) {}
  void Done(double done) {
    const absl::Time now = absl::Now();
    if (now - last_ < absl::Seconds(1) || done >= 1) return;
    last_ = now;
    const double seconds = absl::ToDoubleSeconds(now - start_);
    std::cerr << absl::StrFormat(
        "reshard costs: %.0f%% of %.0f pairs in %.1f s (%.0f pairs/s), about %.0f s left\n",
        100 * done, pairs_, seconds, done * pairs_ / seconds, seconds * (1 - done) / done);
  }

 private:
  double pairs_;
  absl::Time start_, last_;
};

CommandResult RunCosts(const FlagValues& flags, const std::vector<std::string>&) {
  absl::StatusOr<CostsRequest> r = RequestFromFlags(flags);
  if (!r.ok()) return Fail(r.status().message(), kExitBadInput);
  absl::StatusOr<int64_t> max_pairs = PositiveFlag(flags, "max-pairs", kDefaultMaxPairs);
  if (!max_pairs.ok()) return Fail(max_pairs.status().message(), kExitBadInput);
  const auto max_layouts = static_cast<int64_t>(std::sqrt(static_cast<double>(*max_pairs)));
  absl::StatusOr<std::vector<DistState>> layouts = ReadLayoutList(
      flags.Get("layouts"), r->mesh, r->shape, r->dtype, std::max<int64_t>(max_layouts, 1));
  if (!layouts.ok()) {
    return Fail(absl::StrCat("--layouts ", layouts.status().message()), kExitBadInput);
  }
  // One CostMatrix call for all rows (they share their searches), progress
  // from its workers; if a pair hits a limit, blocks of rows again, pair by
  // pair where a block fails, so that every other pair is still printed.
  const size_t n = layouts->size();
  Progress progress(n * n);
  r->options.on_progress = [&progress](double done) { progress.Done(done); };
  absl::StatusOr<CostMatrixResult> all =
      CostMatrix(r->mesh, r->shape, r->dtype, *layouts, *layouts, r->options);
  r->options.on_progress = nullptr;
  if (!all.ok() && !PlanLimitOf(all.status()).has_value()) {
    // Not a pair over a limit (e.g. an option CostMatrix refuses): nothing to print.
    const absl::Status status = InFrontEndTerms(all.status(), FieldStyle::kFlag);
    return Fail(status.message(), absl::IsResourceExhausted(status) ? kExitNoPlan
                                  : absl::IsInvalidArgument(status) ? kExitBadInput
                                                                    : kExitInternal);
  }
  const size_t block = std::max<size_t>(4 * std::max(r->options.threads, 1), (n + 31) / 32);
  int64_t failed = 0;
  for (size_t begin = 0; begin < n; begin += block) {
    const size_t end = std::min(n, begin + block);
    std::vector<Row> rows(end - begin);
    if (all.ok()) {
      for (size_t i = begin; i < end; ++i) rows[i - begin].costs = std::move((*all)[i]);
    } else {
      rows = Rows(*r, *layouts, begin, end);
    }
    for (size_t i = begin; i < end; ++i) {
      failed += static_cast<int64_t>(rows[i - begin].errors.size());
      PrintRow(i, rows[i - begin]);
    }
    if (std::ferror(stdout)) break;  // main() reports it
  }
  if (failed > 0) {
    return Fail(absl::StrCat(failed, " of ", n * n,
                             " pairs have no cost (null, each with its "
                             "reason in \"errors\"); every other pair is printed"),
                kExitNoPlan);
  }
  return kExitOk;
}

// reshard costs --help before FLAGS.
constexpr char kAbout[] =
    R"txt(reshard costs: the cost of every redistribution between a list of layouts.

For auto-parallel solvers that price many (source, target) layout pairs of one
tensor: reads N layouts and prints the N x N matrix of graph-plan costs, one
JSON line per source. Entry j of line i is exactly the cost `reshard plan
--algorithm graph` reports for layout i -> layout j (null where no plan
exists), with work shared across pairs: in pytorch mode each row is one
search instead of N; in native mode each target adds its goal edges to a
graph shared by every pair and gets a table of distances over it, and each
pair a short search guided by it.

USAGE
  printf 'S(0)RR\nRS(1)R\nP(sum)RS(0)\n' > layouts.txt
  reshard costs --mesh 2,2,2 --shape 1024,4096 --layouts layouts.txt
  out (native mode, the default; one line per layout, in file order):
    {"src":0,"costs":[0.0,23.450844444444446,45.11793724709784]}
    {"src":1,"costs":[23.450844444444446,0.0,28.458968623548923]}
    {"src":2,"costs":[55.23117320066335,49.405750978441134,0.0]}
  reshard costs --mesh 2,2,2 --shape 1024,4096 --layouts layouts.txt --mode pytorch

--mesh, --shape and --layouts are required. --max-states and --max-edges
bound each row's search in pytorch mode, each pair's in native mode.
)txt";

// costs' flags: the request flags it takes, the layouts and the matrix's.
std::vector<FlagSpec> Flags() {
  std::vector<FlagSpec> flags = RequestFlags({"mesh", "shape"});
  flags.push_back({"layouts", "FILE",
                   "required; one layout per line (see NOTATION), - for stdin; blank lines are "
                   "skipped, indices count layouts"});
  for (FlagSpec& f : RequestFlags({"dtype", "mode", "cost-model", "devices-per-host", "profile"})) {
    flags.push_back(std::move(f));
  }
  flags.push_back({"threads", "N",
                   "every core this process may run on, at most 16; the matrix is computed on N "
                   "threads (pytorch mode splits its rows among them, native mode its columns); "
                   "the costs do not depend on N"});
  for (FlagSpec& f : RequestFlags({"max-states", "max-edges"})) flags.push_back(std::move(f));
  flags.push_back({"max-pairs", "N",
                   "1048576 (1024 layouts); more layouts than sqrt(N) is an error before "
                   "anything is planned"});
  return flags;
}

}  // namespace

Command CostsCommand() {
  return {
      "costs",
      "the cost of every (source, target) pair of a list of layouts",
      kAbout,
      Flags(),
      absl::StrCat(R"txt(A pair whose search hits a bound (--max-states, --max-edges) is null with
its reason in the row's "errors" ([{"dst":j,"error":"...","limit":"..."}]);
every other pair is still printed, and the exit code is then 3. Runs over a
second report progress on stderr.

Entry j of row i is the cost `reshard plan --algorithm graph` reports for
layout i -> layout j in the same mode: pytorch mode runs one search per row
(spec §5.1); native mode one A* pass per pair over states and edges shared by
all pairs, since its graph depends on the target (spec §5.2).

)txt",
                   ModesHelp(), "\n", NotationHelp(), "\n", ExitCodesHelp()),
      "reshard",
      RunCosts};
}

}  // namespace reshard
