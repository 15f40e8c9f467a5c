// reshard bench: each mode's plan of one redistribution run on Gloo with the
// same data, checked, timed (interleaved repetitions) and compared: modeled
// cost under its own and the native model, bytes sent, peak bytes.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/backend_command_summaries.h"
#include "cli/bench/bench_cross_mesh.h"
#include "cli/bench/bench_pricing.h"
#include "cli/bench/bench_settings.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/request_flags.h"
#include "formats/request_json.h"
#include "harness/bench_run.h"
#include "harness/collective_timing.h"
#include "harness/ground_truth.h"
#include "harness/host_memory.h"
#include "harness/paired_rounds.h"
#include "harness/prepared_case.h"
#include "harness/receive_bound.h"
#include "nlohmann/json.hpp"
#include "planner/planner.h"
#include "planner/steps/planned_bytes.h"

namespace reshard {
namespace {

// Same-mesh modes: native, pytorch; cross-mesh: native, naive (spec §14).
absl::Status ParseModes(const FlagValues& flags, BenchSettings* s) {
  s->modes =
      absl::StrSplit(flags.Get("modes", s->cross_mesh ? "native,naive" : "native,pytorch"), ',');
  for (size_t i = 0; i < s->modes.size(); ++i) {
    const std::string& m = s->modes[i];
    if (s->cross_mesh && m == "pytorch") {
      return absl::InvalidArgumentError(
          "--modes: pytorch mode plans on one mesh only; a cross-mesh bench (--dst-mesh, "
          "--src-ranks, --dst-ranks) runs native and naive (the gather-send-scatter baseline)");
    }
    if (!s->cross_mesh && m == "naive") {
      return absl::InvalidArgumentError(
          "--modes: naive is the cross-mesh baseline; give --dst-mesh, --src-ranks or "
          "--dst-ranks for a cross-mesh move, or use native, pytorch");
    }
    if (m != "native" && m != "pytorch" && m != "naive") {
      return absl::InvalidArgumentError(absl::StrCat("--modes: unknown mode \"", Abbreviate(m, 64),
                                                     "\" (known: native, ",
                                                     s->cross_mesh ? "naive" : "pytorch", ")"));
    }
    if (std::find(s->modes.begin(), s->modes.begin() + i, m) != s->modes.begin() + i) {
      return absl::InvalidArgumentError(absl::StrCat("--modes: \"", m, "\" is given twice"));
    }
  }
  return absl::OkStatus();
}

// Whether the move is cross-mesh (--dst-mesh, --src-ranks, --dst-ranks, read
// by ReadRequestFlags), and what a cross-mesh bench does not take.
absl::Status ParseCrossMeshFields(const FlagValues& flags, BenchSettings* s) {
  s->cross_mesh = IsCrossMesh(s->request);
  if (!s->cross_mesh) return absl::OkStatus();
  if (flags.Has("processes")) {
    return absl::InvalidArgumentError(
        "--processes: a cross-mesh bench runs every participant as a thread of this process "
        "(processes are not there yet); leave --processes out");
  }
  if (flags.Has("cost-model")) {
    return absl::InvalidArgumentError(
        "--cost-model: names pytorch mode's model, and a cross-mesh bench has no pytorch mode "
        "(native and naive plan with this machine's model, --profile)");
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchSettings> ParseSettings(const FlagValues& flags) {
  BenchSettings s;
  for (const char* required : {"mesh", "shape", "src", "dst"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard bench --help)"));
    }
  }
  RequestFields& r = s.request;
  RESHARD_RETURN_IF_ERROR(ReadRequestFlags(flags, &r));
  r.cost_model = flags.Get("cost-model", "pytorch");
  r.profile = flags.Get("profile");
  RESHARD_ASSIGN_OR_RETURN(r.devices_per_host, IntFlagIn(flags, "devices-per-host", 8, 1, 1 << 20));
  RESHARD_RETURN_IF_ERROR(ParseCrossMeshFields(flags, &s));
  RESHARD_RETURN_IF_ERROR(ParseModes(flags, &s));
  RESHARD_ASSIGN_OR_RETURN(s.repeat, IntFlagIn(flags, "repeat", 5, 1, 1000));
  RESHARD_ASSIGN_OR_RETURN(s.seed, IntFlagIn(flags, "seed", 0, 0, int64_t{1} << 62));
  RESHARD_ASSIGN_OR_RETURN(int64_t timeout, IntFlagIn(flags, "timeout", 30, 1, 3600));
  s.gloo.timeout = absl::Seconds(timeout);
  RESHARD_ASSIGN_OR_RETURN(s.max_ranks, IntFlagIn(flags, "max-ranks", 64, 1, 4096));
  s.max_bytes = DefaultMaxHostMemory();
  if (flags.Has("max-memory")) {
    RESHARD_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize("max-memory", flags.Get("max-memory")));
    s.max_bytes = static_cast<double>(bytes);
  }
  s.format = flags.Get("format", "text");
  if (s.format != "text" && s.format != "json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--format: unknown format \"", Abbreviate(s.format, 64), "\" (known: text, json)"));
  }
  s.dry_run = flags.Has("dry-run");
  s.processes = flags.Has("processes");
  return s;
}

// The request of one mode: pytorch mode prices with --cost-model; native
// with this machine's model (settings.pricing), set on the options after
// validation since it may come from no file.
RequestFields ModeRequest(const RequestFields& r, const std::string& mode) {
  RequestFields out = r;
  out.mode = mode;
  if (mode == "native") out.cost_model = "alpha-beta";
  out.profile.clear();
  return out;
}

// One mode planned, before any data exists.
struct PlannedMode {
  std::string mode;
  PlanRequest request;
  Plan plan;
};

absl::StatusOr<PlannedMode> PlanOneMode(const BenchSettings& s, const std::string& mode) {
  RESHARD_ASSIGN_OR_RETURN(PlanRequest v,
                           RequestFromFields(ModeRequest(s.request, mode), FieldStyle::kFlag));
  v.options.coordinate.assign(v.src.mesh().ndim(), 0);
  if (mode == "native") v.options.cost_model = s.pricing.model;
  absl::StatusOr<Plan> plan = PlanRedistribution(v);
  absl::Status runnable =
      plan.ok() ? CheckRunnable(*plan, v.src.mesh(), v.src.dtype()) : plan.status();
  if (!runnable.ok()) {  // verify's rule: R->P(prod) is no plan to run (exit 3)
    return absl::Status(runnable.code(), absl::StrCat(mode, " mode: ", runnable.message()));
  }
  return PlannedMode{mode, std::move(v), *std::move(plan)};
}

// The mode with its data: verify's PreparedCase (the same seed for every mode).
absl::StatusOr<PreparedCase> WithData(const BenchSettings& s, PlannedMode m) {
  VerifyCase c;
  c.mesh = s.request.mesh;
  c.shape = s.request.shape;
  c.dtype = m.request.src.dtype();
  c.src = s.request.src;
  c.dst = s.request.dst;
  c.data_seed = static_cast<uint64_t>(s.seed);
  RESHARD_ASSIGN_OR_RETURN(LocalTensor global, TestTensor(c.dtype, c.shape, c.data_seed,
                                                          m.request.src.mesh().num_ranks()));
  return PreparedCase{std::move(c),
                      std::move(m.request.src),
                      std::move(m.request.dst),
                      std::move(m.request.options),
                      std::move(m.plan),
                      std::move(global)};
}

// The plan re-priced step by step under this machine's model (native
// mode's, settings.pricing): the predicted time, microseconds.
double PredictedUs(const BenchSettings& s, const PlannedMode& p) {
  const std::unique_ptr<const BoundCostModel> bound = s.pricing.model->Bind(CostProblem{
      p.request.src.mesh(), p.request.src.global_shape(), ItemSize(p.request.src.dtype())});
  double cost = 0;
  for (size_t i = 0; i < p.plan.steps.size(); ++i) {
    cost += bound->StepCost(p.plan.states[i], p.plan.steps[i].step);
  }
  return cost;
}

// Refused before anything is allocated: too many ranks, too much memory,
// bool data with Partial placements.
absl::Status CheckLimits(const BenchSettings& s, const std::vector<PlannedMode>& modes) {
  const DistSpec& src = modes.front().request.src;
  const DistSpec& dst = modes.front().request.dst;
  const DeviceMesh& mesh = src.mesh();
  if (mesh.num_ranks() > s.max_ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--mesh %s has %d ranks, more than bench runs on one host (%d, --max-ranks)",
        absl::StrJoin(s.request.mesh, ","), mesh.num_ranks(), s.max_ranks));
  }
  double bytes = 0;
  for (const PlannedMode& m : modes) bytes += EstimatedBytes(src, dst, m.plan);
  if (bytes > s.max_bytes && !s.dry_run) {  // --dry-run allocates nothing
    return absl::InvalidArgumentError(absl::StrFormat(
        "the case needs about %s of host memory for %d modes, more than the limit of "
        "%s (--max-memory); use a smaller --shape or raise --max-memory",
        ShownBytes(bytes), modes.size(), ShownBytes(s.max_bytes)));
  }
  return CheckPartialsReducible(src, dst, "--dtype");
}

// What bench reports for one mode.
struct ModeReport {
  std::string mode;
  std::string trace;
  double modeled_cost = 0;
  double predicted_us = 0;  // also native_model_cost: native mode's model is the machine's
  std::string cost_model;   // what the mode planned with
  std::string profile;      // its profile; empty for none
  int64_t peak_bytes_max = 0;
  ModeMeasurement measured;
  // The most any rank must receive, whatever the plan (harness/receive_bound.h).
  int64_t receive_lower_bound_max = 0;
};

}  // namespace

double MinOf(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }
double MaxOf(std::vector<double> v) { return *std::max_element(v.begin(), v.end()); }

nlohmann::ordered_json MeasuredUsJson(const std::vector<double>& us) {
  auto pick = [&](double (*f)(std::vector<double>)) -> nlohmann::ordered_json {
    if (us.empty()) return nullptr;
    return std::round(f(us) * 10) / 10;
  };
  nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
  for (double u : us) rounds.push_back(std::round(u * 10) / 10);
  return {{"median", pick(Median)}, {"min", pick(MinOf)}, {"max", pick(MaxOf)}, {"rounds", rounds}};
}

std::string UsCell(const std::vector<double>& us, double (*pick)(std::vector<double>)) {
  return us.empty() ? std::string("-") : absl::StrFormat("%.1f", pick(us));
}

std::string DryRunJson(const ReceiveBound& bound, const std::vector<std::string>& modes,
                       const std::vector<int64_t>& bytes_sent_max) {
  nlohmann::ordered_json line;
  line["receive_bound_max"] = bound.max_bytes;
  line["receive_bound_total"] = bound.total_bytes;
  nlohmann::ordered_json sent = nlohmann::ordered_json::object();
  for (size_t m = 0; m < modes.size(); ++m) sent[modes[m]] = bytes_sent_max[m];
  line["bytes_sent_max"] = sent;
  return line.dump();
}

namespace {

// The promised keys, in this order (reshard bench --help).
std::string JsonLine(const ModeReport& r) {
  nlohmann::ordered_json line;
  line["mode"] = r.mode;
  line["trace"] = r.trace;
  line["modeled_cost"] = r.modeled_cost;
  line["native_model_cost"] = r.predicted_us;
  line["bytes_sent_max"] = r.measured.bytes_sent_max;
  line["peak_bytes_max"] = r.peak_bytes_max;
  line["measured_us"] = MeasuredUsJson(r.measured.run_us);
  line["verified"] = r.measured.verified;
  line["predicted_us"] = std::round(r.predicted_us * 10) / 10;
  line["cost_model"] = r.cost_model;
  line["profile"] = r.profile.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(Utf8Valid(r.profile));
  line["receive_lower_bound_max"] = r.receive_lower_bound_max;
  return line.dump();
}

}  // namespace

namespace {

std::string Header(const BenchSettings& s, const ReceiveBound& bound, int64_t ranks) {
  return absl::StrFormat(
      "bench: mesh %s, shape %s %s, %s -> %s; %d ranks as %s, %d interleaved rounds after one "
      "warm-up run per mode\nreceive lower bound: %d bytes per rank (max), %d in total\n"
      "machine model (native mode's plans, every mode's predicted us): %s\n\n",
      absl::StrJoin(s.request.mesh, ","), absl::StrJoin(s.request.shape, ","), s.request.dtype,
      s.request.src, s.request.dst, ranks, s.processes ? "processes" : "threads", s.repeat,
      bound.max_bytes, bound.total_bytes, s.pricing.description);
}

// What a mode planned with: (cost model, profile or empty).
std::pair<std::string, std::string> PlannedWith(const BenchSettings& s, const std::string& mode) {
  if (mode == "native") return {s.pricing.model_name, s.pricing.profile};
  const std::string model = ModeRequest(s.request, mode).cost_model;  // --cost-model
  return {model, model == "alpha-beta" ? "built-in " + DefaultGpuProfile().name : ""};
}

std::string TextTable(const std::vector<ModeReport>& reports) {
  std::string out = absl::StrFormat("%-8s %11s %11s %11s %13s %16s %12s %14s  %s\n", "mode",
                                    "median us", "min us", "max us", "predicted us",
                                    "bytes sent max", "peak bytes", "modeled cost", "verified");
  for (const ModeReport& r : reports) {
    const std::vector<double>& us = r.measured.run_us;
    absl::StrAppend(&out,
                    absl::StrFormat("%-8s %11s %11s %11s %13.1f %16d %12d %14.6g  %s\n", r.mode,
                                    UsCell(us, Median), UsCell(us, MinOf), UsCell(us, MaxOf),
                                    r.predicted_us, r.measured.bytes_sent_max, r.peak_bytes_max,
                                    r.modeled_cost, r.measured.verified ? "yes" : "NO"));
  }
  absl::StrAppend(&out, "\n");
  for (const ModeReport& r : reports) {
    absl::StrAppend(&out, r.mode, " planned with: ", r.cost_model,
                    r.profile.empty() ? "" : absl::StrCat(" (profile: ", Utf8Valid(r.profile), ")"),
                    "\n");
  }
  for (const ModeReport& r : reports) absl::StrAppend(&out, r.mode, " trace: ", r.trace, "\n");
  if (reports.size() == 2) {
    absl::StrAppend(&out, PairedSummary(reports[1].mode, reports[1].measured.run_us,
                                        reports[0].mode, reports[0].measured.run_us));
  }
  return out;
}

// Where the ranks run: threads, or with --processes this binary started
// again per rank with the same flags.
LaunchOptions Launch(const BenchSettings& s, const std::vector<std::string>& args) {
  LaunchOptions launch;
  launch.on = s.processes ? RanksOn::kProcesses : RanksOn::kThreads;
  launch.gloo = s.gloo;
  launch.child_args = {"reshard", "bench"};
  for (const std::string& a : args) {
    if (a != "--processes") launch.child_args.push_back(a);
  }
  return launch;
}

// Every mode planned (errors name the mode) and checked against the limits.
absl::StatusOr<std::vector<PlannedMode>> PlanModes(const BenchSettings& s) {
  std::vector<PlannedMode> planned;
  for (const std::string& mode : s.modes) {
    RESHARD_ASSIGN_OR_RETURN(PlannedMode m, PlanOneMode(s, mode));
    planned.push_back(std::move(m));
  }
  RESHARD_RETURN_IF_ERROR(CheckLimits(s, planned));
  return planned;
}

// Runs the prepared modes (or, with --rank, one rank of them) and reports.
CommandResult RunAndReport(const BenchSettings& s, const FlagValues& flags,
                           const std::vector<std::string>& args, std::vector<ModeReport> reports,
                           const std::vector<PreparedCase>& prepared) {
  if (flags.Has("rank")) {  // hidden: a child of --processes
    absl::StatusOr<int64_t> rank = ParseInt("rank", flags.Get("rank"));
    if (!rank.ok() || !flags.Has("store-dir"))
      return Fail("--rank needs --store-dir", kExitBadInput);
    return RunBenchChild(prepared, s.repeat,
                         ChildRank{*rank, flags.Get("store-dir"), flags.Get("job", "case0")},
                         Launch(s, args));
  }
  std::vector<RankRuns> runs = RunBench(prepared, s.repeat, Launch(s, args));
  bool all_verified = true;
  std::string out_of_resources;  // said once, whichever modes ran out
  for (size_t m = 0; m < prepared.size(); ++m) {
    reports[m].measured = Measure(prepared[m], runs, m, s.repeat);
    const ModeMeasurement& measured = reports[m].measured;
    if (measured.out_of_resources) {
      if (out_of_resources.empty()) out_of_resources = measured.detail;
    } else if (!measured.verified) {
      all_verified = false;
      std::cerr << "reshard bench: " << reports[m].mode
                << " mode not verified: " << Utf8Valid(measured.detail) << "\n";
    }
    if (s.format == "json") std::cout << JsonLine(reports[m]) << "\n";
  }
  if (s.format == "text") std::cout << TextTable(reports);
  if (!out_of_resources.empty()) {
    std::cerr << "reshard bench: " << Utf8Valid(out_of_resources) << "\n";
    return kExitNoPlan;
  }
  return all_verified ? kExitOk : kExitInternal;
}

}  // namespace

namespace {

CommandResult RunBenchmark(const FlagValues& flags, const std::vector<std::string>& args) {
  absl::StatusOr<BenchSettings> s = ParseSettings(flags);
  if (!s.ok()) return Fail(s.status().message(), kExitBadInput);
  absl::StatusOr<BenchPricing> pricing =
      ResolveBenchPricing(s->request.profile, s->request.devices_per_host);
  if (!pricing.ok()) return Fail(pricing.status().message(), kExitBadInput);
  s->pricing = *std::move(pricing);
  if (s->cross_mesh) return RunCrossMeshBench(*s);
  absl::StatusOr<std::vector<PlannedMode>> planned = PlanModes(*s);
  if (!planned.ok()) return Fail(planned.status().message(), ExitCodeFor(planned.status()));
  const ReceiveBound bound =
      ReceiveLowerBound(planned->front().request.src, planned->front().request.dst);
  std::vector<ModeReport> reports;
  for (const PlannedMode& m : *planned) {
    const auto [model, profile] = PlannedWith(*s, m.mode);
    reports.push_back({m.mode,
                       m.plan.Trace(),
                       m.plan.cost,
                       PredictedUs(*s, m),
                       model,
                       profile,
                       m.plan.peak_bytes,
                       {},
                       bound.max_bytes});
  }
  const bool child = flags.Has("rank");
  if (s->format == "text" && !child) {
    std::cout << Header(*s, bound, planned->front().request.src.mesh().num_ranks());
  }
  if (s->dry_run) {
    if (s->format == "json") {
      std::vector<int64_t> sent;
      for (const PlannedMode& m : *planned) {
        const std::vector<int64_t> per_rank = PlannedBytesSent(m.request.src, m.plan);
        sent.push_back(*std::max_element(per_rank.begin(), per_rank.end()));
      }
      std::cout << DryRunJson(bound, s->modes, sent) << "\n";
    } else {
      for (const ModeReport& r : reports) std::cout << r.mode << " trace: " << r.trace << "\n";
    }
    return kExitOk;
  }
  std::vector<PreparedCase> prepared;
  for (PlannedMode& m : *planned) {
    absl::StatusOr<PreparedCase> p = WithData(*s, std::move(m));
    if (!p.ok()) return Fail(p.status().message(), ExitCodeFor(p.status()));
    prepared.push_back(*std::move(p));
  }
  return RunAndReport(*s, flags, args, std::move(reports), prepared);
}

// reshard bench --help before FLAGS.
constexpr char kAbout[] =
    R"txt(reshard bench: run each mode's plan on real data and compare them, measured.

Plans the redistribution in each mode, runs every plan on Gloo (TCP on
127.0.0.1) with the same deterministic data, checks every rank's result
against its shard computed directly (as reshard verify does), and reports
per mode: the trace, the modeled cost under the mode's own cost model, the
predicted time (predicted_us: the plan priced step by step by this machine's
model, next to the measured time), the most bytes any rank sent, the plan's
peak bytes per rank, and the measured time.

Native mode plans for the machine it runs on, Gloo on this host (spec §6.3),
with the first of: --profile FILE (version 2: the measured model; version 1:
alpha-beta); the default profile $XDG_CONFIG_HOME/reshard/gloo-profile.json
(else ~/.config/reshard/gloo-profile.json) if it exists; the built-in
profile (bench/profiles/gloo-loopback-measured.json, measured on the
development VM; --profile builtin picks it whatever exists). Every output
says which. Each mode runs once untimed (connecting its
groups), then --repeat rounds of every mode in turn (interleaved, so load
drift hits all modes alike; odd rounds in reverse order, so that no mode
always goes first), each after a barrier over the mesh; a run's time
is its slowest rank's Redistribute call, and median, min and max are over
the rounds. With two modes the text ends with the ratio of their medians
and the same round by round: the median of the rounds' ratios, how many
rounds the second mode won, and a two-sided sign test (a small p: the
difference is no coin flip of the machine's load). Each rank computes its
source shard once; a run's input is an untimed copy of it into the
executor's buffer cache, made between two barriers so that no rank's
untimed work overlaps another's timed call. Also
printed (text): the least bytes a rank must receive, the part of its
destination block it does not already hold (harness/receive_bound.h).

A cross-mesh move (--dst-mesh, --src-ranks, --dst-ranks; spec §14) runs
with every participant a Gloo thread: native mode's plan against the naive
baseline (Partials reduced as in the plain plan, the whole tensor gathered
on the first source rank, sent to the first destination rank and scattered
there), both priced and planned with the machine model, checked as reshard
verify checks cross-mesh moves.

USAGE
  reshard bench --mesh 2,4 --shape 1024,1024 --src 'S(0)S(1)' --dst 'S(1)S(0)'
  reshard bench --mesh 8 --shape 4096,1024 --src 'S(0)' --dst 'R' --repeat 20 --format json
  reshard bench ... --processes       (one process per rank)
  reshard bench --mesh 4,2 --dst-mesh 2 --dst-ranks 8,9 --shape 1024,1024 \
      --src 'S(0)S(1)' --dst 'S(1)'     (cross-mesh: native vs naive)

--mesh, --shape, --src and --dst are required; --dtype bool takes no Partial.
The move is cross-mesh when --dst-mesh, --src-ranks or --dst-ranks differs
from its default. --cost-model prices pytorch mode's plans only: pytorch (the
default), pytorch-const or alpha-beta; native mode's plans are priced with
this machine's profile (--profile, above).

)txt";

// bench's flags: the request flags it takes, then how the modes are run.
std::vector<FlagSpec> Flags() {
  std::vector<FlagSpec> flags =
      RequestFlags({"mesh", "shape", "src", "dst", "dst-mesh", "src-ranks", "dst-ranks", "dtype",
                    "cost-model", "devices-per-host"});
  const std::vector<FlagSpec> own = {
      {"modes", "LIST",
       "native,pytorch; the modes to run, in this order. Cross-mesh: native,naive "
       "(naive: gather on the first source rank, send to the first destination rank, "
       "scatter; pytorch is refused)"},
      {"repeat", "N", "5; timed rounds (1 to 1000)"},
      {"profile", "FILE",
       "this machine's profile (reshard calibrate --out FILE), for native mode's plans and "
       "predicted_us; or builtin; default: the default path above, else builtin"},
      {"seed", "N", "0; the data seed"},
      {"format", "FORMAT",
       "text (a table) or json (one object per mode per line: mode, trace, modeled_cost, "
       "native_model_cost (the same as predicted_us), bytes_sent_max, peak_bytes_max, "
       "measured_us {median, min, max, rounds (each round's time, in round order)}, "
       "verified, predicted_us, cost_model and profile "
       "(what the mode planned with; profile null for none), receive_lower_bound_max "
       "(the most any rank must receive, whatever the plan)). Cross-mesh: the same keys "
       "but peak_bytes_max, the prices null where the model prices no exchange, then "
       "cross_mesh (true), participants, crossing_bytes_sent_max"},
      {"dry-run", "",
       "plan and check the flags, print the receive lower bound and each mode's trace "
       "(text), or json {\"receive_bound_max\", \"receive_bound_total\", "
       "\"bytes_sent_max\": {MODE: the busiest rank's bytes, counted from the plan}}, "
       "but run nothing"},
      {"processes", "",
       "one process per rank (a file store in a temporary directory); not cross-mesh"},
      {"timeout", "S", "30; seconds a rank waits for its peers"},
      {"max-ranks", "N",
       "64; refuse meshes with more ranks (each is a thread or process with sockets to its "
       "peers)"},
      {"max-memory", "BYTES",
       "refuse a case whose host memory for all modes, counted from the plans before "
       "anything is allocated, exceeds this (K, M, G, T suffixes; default half of this "
       "machine's memory or of ulimit -v)"},
  };
  flags.insert(flags.end(), own.begin(), own.end());
  const std::vector<FlagSpec> child = ChildRankFlags();  // --processes, --store
  flags.insert(flags.end(), child.begin(), child.end());
  return flags;
}

}  // namespace

Command BenchCommand() {
  return {"bench",
          kBenchSummary,
          kAbout,
          Flags(),
          absl::StrCat(R"txt(EXIT CODES
  0  every mode ran and its result was verified
  1  a mode failed to run or gave a wrong result (its verified is false;
     the reason is on stderr), or the output could not be written
  2  bad input, naming the flag
  3  no plan in some mode: none exists (pytorch mode plans with its greedy
     planner where it can, which cannot do S -> P or P(x) -> P(y)), or a
     graph search hit its bound; or the ranks ran out of memory or threads
     (ulimit -v, ulimit -u): one message on stderr

)txt",
                       ModesHelp(), "\n", NotationHelp()),
          "reshard bench",
          RunBenchmark};
}

}  // namespace reshard
