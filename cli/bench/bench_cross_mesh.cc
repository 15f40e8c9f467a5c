#include "cli/bench/bench_cross_mesh.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/verify/verify_cross_mesh.h"
#include "formats/cross_mesh_json.h"
#include "harness/collective_timing.h"
#include "harness/cross_mesh_bench.h"
#include "harness/cross_mesh_case.h"
#include "harness/ground_truth.h"
#include "harness/paired_rounds.h"
#include "harness/prepared_case.h"
#include "harness/receive_bound.h"
#include "nlohmann/json.hpp"
#include "planner/cross_mesh/planned_bytes_across.h"

namespace reshard {
namespace {

// The move the flags describe, validated as `reshard plan` validates one
// (errors name the flag).
absl::StatusOr<CrossMeshRequest> RequestFromSettings(const BenchSettings& s) {
  RequestFields fields = s.request;
  fields.mode = "native";
  fields.cost_model.clear();
  fields.profile.clear();
  RESHARD_RETURN_IF_ERROR(CrossMeshPlanFromFields(fields, FieldStyle::kFlag).status());
  return RequestOf(CrossMeshCaseOf(fields));
}

// Each mode planned with this machine's model (native: the cheapest
// crossing; naive: the plain plan's steps around the baseline's hops);
// errors name the mode. A step that cannot run is no plan (exit 3).
absl::StatusOr<std::vector<AcrossMode>> PlanModes(const BenchSettings& s,
                                                  const CrossMeshRequest& r) {
  RESHARD_RETURN_IF_ERROR(CheckPartialsReducible(r.src, r.dst, "--dtype"));
  PlanOptions options;
  options.mode = PlanMode::kNative;
  options.cost_model = s.pricing.model;
  std::vector<AcrossMode> modes;
  for (const std::string& mode : s.modes) {
    absl::StatusOr<AcrossMode> m;
    if (mode == "native") {
      absl::StatusOr<CrossMeshPlan> plan = PlanCrossMesh(r, options);
      if (plan.ok()) m = AcrossMode{mode, *std::move(plan), std::nullopt};
      if (!plan.ok()) m = plan.status();
    } else {
      absl::StatusOr<NaiveCrossMeshPlan> naive = PlanNaiveCrossMesh(r, options);
      if (naive.ok()) m = AcrossMode{mode, naive->plain, *std::move(naive)};
      if (!naive.ok()) m = naive.status();
    }
    absl::Status ok =
        m.ok() ? CheckRunnable(m->plan.before, r.src.mesh(), r.src.dtype()) : m.status();
    if (ok.ok()) ok = CheckRunnable(m->plan.after, r.dst.mesh(), r.src.dtype());
    if (!ok.ok()) return absl::Status(ok.code(), absl::StrCat(mode, " mode: ", ok.message()));
    modes.push_back(*std::move(m));
  }
  return modes;
}

// Refused before anything is allocated (bad input naming the flag).
absl::Status CheckLimits(const BenchSettings& s, const CrossMeshRequest& r,
                         const std::vector<AcrossMode>& modes) {
  const int64_t n = static_cast<int64_t>(modes.front().plan.participants.size());
  if (n > s.max_ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-ranks: the move has %d participants (both rank sets' union, each a thread), "
        "more than --max-ranks %d",
        n, s.max_ranks));
  }
  // The global tensor, and per participant and mode at most four copies of
  // it (its block, the exchange's buffers, its last result): a bound.
  double bytes = ItemSize(r.src.dtype()) * (1.0 + 4.0 * n * static_cast<double>(modes.size()));
  for (int64_t e : r.src.global_shape()) bytes *= static_cast<double>(e);
  if (bytes > s.max_bytes && !s.dry_run) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-memory: the move may take %s for %d modes (the global tensor and four "
        "copies of it per participant and mode at most), more than %s; use a smaller "
        "--shape or raise --max-memory",
        ShownBytes(bytes), modes.size(), ShownBytes(s.max_bytes)));
  }
  return absl::OkStatus();
}

// The mode's price under this machine's model: none when it prices no
// exchange (spec §14 "Price"; bench's models all do).
std::optional<double> PriceOf(const AcrossMode& m) {
  return m.naive.has_value() ? m.naive->cost : m.plan.cost;
}

std::string TraceOf(const AcrossMode& m) {
  return m.naive.has_value() ? m.naive->Summary() : m.plan.Summary();
}

int64_t Max(const std::vector<int64_t>& v) { return *std::max_element(v.begin(), v.end()); }

std::vector<int64_t> PlannedSent(const CrossMeshRequest& r, const AcrossMode& m) {
  return m.naive.has_value() ? PlannedBytesSentAcross(r, *m.naive)
                             : PlannedBytesSentAcross(r, m.plan);
}

nlohmann::ordered_json Rounded(std::optional<double> us) {
  if (!us.has_value()) return nullptr;
  return std::round(*us * 10) / 10;
}

// One mode's line: the one-mesh bench's keys where they apply (no
// peak_bytes_max: the naive baseline's hops model no memory), then the
// crossing's.
std::string JsonLine(const BenchSettings& s, const AcrossMode& m, const AcrossMeasurement& got,
                     const ReceiveBound& bound) {
  nlohmann::ordered_json line;
  line["mode"] = m.mode;
  line["trace"] = TraceOf(m);
  line["modeled_cost"] = Rounded(PriceOf(m));
  line["native_model_cost"] = Rounded(PriceOf(m));
  line["bytes_sent_max"] = got.bytes_sent_max;
  line["measured_us"] = MeasuredUsJson(got.run_us);
  line["verified"] = got.verified;
  line["predicted_us"] = Rounded(PriceOf(m));
  line["cost_model"] = s.pricing.model_name;
  line["profile"] = Utf8Valid(s.pricing.profile);
  line["receive_lower_bound_max"] = bound.max_bytes;
  line["cross_mesh"] = true;
  line["participants"] = m.plan.participants.size();
  line["crossing_bytes_sent_max"] = got.crossing_bytes_sent_max;
  return line.dump();
}

std::string Header(const BenchSettings& s, const CrossMeshRequest& r, const CrossMeshPlan& p,
                   const ReceiveBound& bound) {
  return absl::StrFormat(
      "bench: %s on mesh %s ranks [%s] -> %s on mesh %s ranks [%s], shape %s %s; %d "
      "participants as threads, %d interleaved rounds after one warm-up run per mode\n"
      "receive lower bound: %d bytes per rank (max), %d in total\n"
      "machine model (every mode's plans and predicted us): %s\n\n",
      s.request.src, r.src.mesh().ToString(), absl::StrJoin(p.src_ranks, ","), s.request.dst,
      r.dst.mesh().ToString(), absl::StrJoin(p.dst_ranks, ","), absl::StrJoin(s.request.shape, ","),
      s.request.dtype, p.participants.size(), s.repeat, bound.max_bytes, bound.total_bytes,
      s.pricing.description);
}

std::string TextTable(const std::vector<AcrossMode>& modes,
                      const std::vector<AcrossMeasurement>& got) {
  std::string out =
      absl::StrFormat("%-8s %11s %11s %11s %13s %16s %16s  %s\n", "mode", "median us", "min us",
                      "max us", "predicted us", "bytes sent max", "crossing max", "verified");
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::vector<double>& us = got[i].run_us;
    const std::optional<double> price = PriceOf(modes[i]);
    absl::StrAppend(
        &out, absl::StrFormat("%-8s %11s %11s %11s %13s %16d %16d  %s\n", modes[i].mode,
                              UsCell(us, Median), UsCell(us, MinOf), UsCell(us, MaxOf),
                              price ? absl::StrFormat("%.1f", *price) : "-", got[i].bytes_sent_max,
                              got[i].crossing_bytes_sent_max, got[i].verified ? "yes" : "NO"));
  }
  absl::StrAppend(&out, "\n");
  for (const AcrossMode& m : modes) absl::StrAppend(&out, m.mode, " trace: ", TraceOf(m), "\n");
  if (modes.size() == 2) {
    absl::StrAppend(&out,
                    PairedSummary(modes[1].mode, got[1].run_us, modes[0].mode, got[0].run_us));
  }
  return out;
}

// Dry run: the bound and each mode's trace (text), or the bound and each
// mode's planned busiest sender (json, DryRunJson).
int PrintDryRun(const BenchSettings& s, const CrossMeshRequest& r,
                const std::vector<AcrossMode>& modes, const ReceiveBound& bound) {
  if (s.format == "json") {
    std::vector<int64_t> sent;
    for (const AcrossMode& m : modes) sent.push_back(Max(PlannedSent(r, m)));
    std::cout << DryRunJson(bound, s.modes, sent) << "\n";
  } else {
    for (const AcrossMode& m : modes) std::cout << m.mode << " trace: " << TraceOf(m) << "\n";
  }
  return kExitOk;
}

}  // namespace

CommandResult RunCrossMeshBench(const BenchSettings& s) {
  absl::StatusOr<CrossMeshRequest> r = RequestFromSettings(s);
  if (!r.ok()) return Fail(r.status().message(), ExitCodeFor(r.status()));
  absl::StatusOr<std::vector<AcrossMode>> modes = PlanModes(s, *r);
  if (!modes.ok()) return Fail(modes.status().message(), ExitCodeFor(modes.status()));
  if (absl::Status ok = CheckLimits(s, *r, *modes); !ok.ok()) {
    return Fail(ok.message(), kExitBadInput);
  }
  const CrossMeshPlan& plan = modes->front().plan;
  const ReceiveBound bound =
      ReceiveLowerBoundAcross(r->src, r->dst, plan.src_ranks, plan.dst_ranks);
  if (s.format == "text") std::cout << Header(s, *r, plan, bound);
  if (s.dry_run) return PrintDryRun(s, *r, *modes, bound);
  const int64_t ranks = std::max(r->src.mesh().num_ranks(), r->dst.mesh().num_ranks());
  const uint64_t seed = static_cast<uint64_t>(s.seed);
  absl::StatusOr<LocalTensor> global =
      TestTensor(r->src.dtype(), r->src.global_shape(), seed, ranks);
  if (!global.ok()) return Fail(global.status().message(), ExitCodeFor(global.status()));
  const std::vector<AcrossMeasurement> got =
      RunAcrossBench(*r, *modes, *global, seed, s.repeat, s.gloo);
  bool all_verified = true;
  for (size_t i = 0; i < modes->size(); ++i) {
    if (!got[i].verified) {
      all_verified = false;
      std::cerr << "reshard bench: " << (*modes)[i].mode
                << " mode not verified: " << Utf8Valid(got[i].detail) << "\n";
    }
    if (s.format == "json") std::cout << JsonLine(s, (*modes)[i], got[i], bound) << "\n";
  }
  if (s.format == "text") std::cout << TextTable(*modes, got);
  return all_verified ? kExitOk : kExitInternal;
}

}  // namespace reshard
