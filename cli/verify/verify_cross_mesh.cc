#include "cli/verify/verify_cross_mesh.h"

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/byte_size.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/request_flags.h"
#include "cli/verify/verify_hosts.h"
#include "formats/cross_mesh_json.h"
#include "formats/request_json.h"
#include "harness/cross_mesh_runner.h"
#include "harness/job_membership.h"

namespace reshard {
namespace {

constexpr const char* kCrossMeshFlags[] = {"dst-mesh", "src-ranks", "dst-ranks"};

}  // namespace

absl::Status CheckCrossMeshFlags(const FlagValues& flags) {
  if (flags.Has("store") && flags.Has("random")) {
    return absl::InvalidArgumentError(
        "--store: random cross-mesh cases run on this host only (threads, or --processes); "
        "several hosts run one case (--mesh, --dst-mesh, --src-ranks, --dst-ranks ...)");
  }
  if (flags.Has("algorithm")) {
    return absl::InvalidArgumentError(
        "--algorithm: cross-mesh cases plan their steps before and after the crossing with "
        "the mode's default planner");
  }
  if (flags.Has("kill-at") && flags.Get("kill-at") != "0") {
    return absl::InvalidArgumentError(
        "--kill-at: a cross-mesh case's rank dies at its crossing, call 0 of the union "
        "communicator (give 0 or leave it out)");
  }
  if (flags.Has("cross-mesh") && !flags.Has("random")) {
    return absl::InvalidArgumentError(
        "--cross-mesh goes with --random N (one cross-mesh case: give --dst-mesh, --src-ranks "
        "or --dst-ranks)");
  }
  if (flags.Has("plan-max-memory") && flags.Has("random")) {
    return absl::InvalidArgumentError(
        "--plan-max-memory: one case's limit; random cases take --memory-rounds (each its own "
        "limit)");
  }
  if (flags.Has("memory-rounds") && !flags.Has("random")) {
    return absl::InvalidArgumentError(
        "--memory-rounds goes with --random N --cross-mesh (one case: give --plan-max-memory)");
  }
  return absl::OkStatus();
}

absl::Status CheckNoCrossMeshOnlyFlags(const FlagValues& flags) {
  for (const char* flag : {"plan-max-memory", "memory-rounds"}) {
    if (flags.Has(flag)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag,
          ": bounds a cross-mesh crossing; give --dst-mesh, --src-ranks or --dst-ranks, or "
          "--random N --cross-mesh"));
    }
  }
  for (const char* flag : {"cost-model", "profile", "devices-per-host"}) {
    if (flags.Has(flag)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag,
          ": chooses the model cross-mesh cases are planned with; one-mesh cases plan with the "
          "mode's default (give --dst-mesh, --src-ranks or --dst-ranks, or --random N "
          "--cross-mesh)"));
    }
  }
  return absl::OkStatus();
}

int64_t MemoryForRounds(const CrossMeshPlan& unlimited) {
  const std::vector<int64_t> peaks = unlimited.CrossingPeakBytes();
  const int64_t crossing = peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
  const int64_t least = unlimited.LeastCrossingBytes();
  return std::max({unlimited.before.peak_bytes, unlimited.after.peak_bytes,
                   least + (crossing - least) / 2, int64_t{1}});
}

namespace {

// `c` planned with the cost model `fields` name (none: the mode's default),
// the flags repeated for its command line and child processes.
absl::Status WithCostModel(const RequestFields& fields, const FlagValues& flags, CrossMeshCase* c) {
  PlanOptions options;
  RESHARD_RETURN_IF_ERROR(OptionsFromFields(fields, FieldStyle::kFlag, nullptr, &options));
  c->cost_model = options.cost_model;
  c->cost_model_name = flags.Get("cost-model");
  c->profile = flags.Get("profile");
  c->devices_per_host = flags.Get("devices-per-host");
  return absl::OkStatus();
}

// The case the flags describe, validated as `reshard plan` validates a
// cross-mesh move (messages name the flag); NotFound / ResourceExhausted
// when it has no plan.
absl::StatusOr<CrossMeshCase> CaseFromFlags(const FlagValues& flags,
                                            const CrossMeshVerifySettings& s) {
  RESHARD_RETURN_IF_ERROR(RequireOneCaseFlags(flags, {"mesh", "shape", "src", "dst"}));
  RequestFields fields;
  RESHARD_RETURN_IF_ERROR(ReadRequestFlags(flags, &fields));
  RESHARD_RETURN_IF_ERROR(ReadCostModelFlags(flags, &fields));
  if (!flags.Has("dst-mesh")) fields.dst_mesh = fields.mesh;
  fields.mode = std::string(PlanModeName(s.mode));
  if (s.plan_max_memory > 0) fields.max_memory = s.plan_max_memory;
  if (absl::Status planned = CrossMeshPlanFromFields(fields, FieldStyle::kFlag).status();
      !planned.ok()) {
    // verify's --max-memory bounds the host; the planning limit is --plan-max-memory.
    absl::string_view message = planned.message();
    if (absl::ConsumePrefix(&message, "--max-memory:")) {
      return absl::Status(planned.code(), absl::StrCat("--plan-max-memory:", message));
    }
    return planned;
  }
  CrossMeshCase c = CrossMeshCaseOf(fields);
  c.mode = s.mode;
  c.data_seed = static_cast<uint64_t>(s.seed);
  c.max_memory = s.plan_max_memory;
  RESHARD_RETURN_IF_ERROR(WithCostModel(fields, flags, &c));
  return c;
}

// What verify refuses before running a planned case: bad input naming the flag.
absl::Status CheckLimits(const CrossMeshCase& c, const CrossMeshPlan& plan,
                         const CrossMeshVerifySettings& s) {
  const int64_t n = static_cast<int64_t>(plan.participants.size());
  if (n > s.limits.max_ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-ranks: the case has %d participants (both rank sets' union, each a thread), "
        "more than --max-ranks %d",
        n, s.limits.max_ranks));
  }
  // At most the global tensor, and per participant its source shard, the
  // crossing's send and receive buffers and its result, each at most the
  // whole tensor: a bound, not a measurement.
  double bytes = ItemSize(c.dtype) * (1.0 + 4.0 * static_cast<double>(n));
  for (int64_t e : c.shape) bytes *= static_cast<double>(e);
  if (bytes > s.limits.max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max-memory: the case may take %s (the global tensor and four copies of it per "
        "participant at most), more than %s",
        ShownBytes(bytes), ShownBytes(s.limits.max_bytes)));
  }
  if (s.fault.rank >= 0 && std::find(plan.participants.begin(), plan.participants.end(),
                                     s.fault.rank) == plan.participants.end()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--kill-rank: rank %d takes no part in the move (its ranks are %s)",
                        s.fault.rank, absl::StrJoin(plan.participants, ",")));
  }
  return absl::OkStatus();
}

// The argv that runs one participant of `c` in a child process (RunRanks
// adds --rank, --store-dir and --job).
std::vector<std::string> ChildArgs(const CrossMeshCase& c, const CrossMeshVerifySettings& s) {
  std::vector<std::string> args = {"reshard",    "verify",
                                   "--mesh",     absl::StrJoin(c.mesh, ","),
                                   "--dst-mesh", absl::StrJoin(c.dst_mesh, ",")};
  if (!c.src_ranks.empty())
    args.insert(args.end(), {"--src-ranks", absl::StrJoin(c.src_ranks, ",")});
  if (!c.dst_ranks.empty())
    args.insert(args.end(), {"--dst-ranks", absl::StrJoin(c.dst_ranks, ",")});
  if (s.fault.rank >= 0) args.insert(args.end(), {"--kill-rank", absl::StrCat(s.fault.rank)});
  if (c.max_memory > 0) {
    args.insert(args.end(), {"--plan-max-memory", absl::StrCat(c.max_memory)});
  }
  if (!c.cost_model_name.empty()) args.insert(args.end(), {"--cost-model", c.cost_model_name});
  if (!c.profile.empty()) args.insert(args.end(), {"--profile", c.profile});
  if (!c.devices_per_host.empty()) {
    args.insert(args.end(), {"--devices-per-host", c.devices_per_host});
  }
  args.insert(args.end(),
              {"--shape", absl::StrJoin(c.shape, ","), "--dtype", std::string(DTypeName(c.dtype)),
               "--src=" + c.src, "--dst=" + c.dst, "--mode", std::string(PlanModeName(c.mode)),
               "--seed", absl::StrCat(c.data_seed), "--hostname", s.launch.gloo.hostname,
               "--timeout", absl::StrCat(absl::ToInt64Seconds(s.launch.gloo.timeout))});
  const LaunchOptions& o = s.launch;
  if (!o.store_url.empty()) args.insert(args.end(), {"--store", o.store_url});
  if (!o.gloo.interface.empty()) args.insert(args.end(), {"--interface", o.gloo.interface});
  return args;
}

// Where `c`'s participants run: threads, processes, or hosts (`job` names
// the case in their store; for hosts, HostParticipants sets this host's).
LaunchOptions LaunchFor(const CrossMeshCase& c, const CrossMeshVerifySettings& s,
                        const std::string& job) {
  return CaseLaunch(s.launch, s.processes, ChildArgs(c, s), job);
}

// Several hosts (spec §14): --ranks A-B names global ranks, the job's ranks
// are 0 .. the largest participant (so the hosts' ranges cover the gaps
// between participants too), and this host runs the participants whose
// global rank is in A-B. Turns launch->first_rank..last_rank from those
// global ranks into their participant indices (RunRanks runs a 1-D mesh of
// the participants), none: n..n-1.
absl::Status HostParticipants(const CrossMeshPlan& plan, LaunchOptions* launch) {
  const std::vector<int64_t>& all = plan.participants;
  const int64_t top = all.back();
  if (launch->last_rank > top) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ranks %d-%d: a cross-mesh case's --ranks are global ranks, and this move's are 0 to "
        "%d (--src-ranks and --dst-ranks; participants %s)",
        launch->first_rank, launch->last_rank, top, absl::StrJoin(all, ",")));
  }
  const int64_t last = launch->last_rank < 0 ? top : launch->last_rank;
  const int64_t first = std::lower_bound(all.begin(), all.end(), launch->first_rank) - all.begin();
  const int64_t end = std::upper_bound(all.begin(), all.end(), last) - all.begin();
  const int64_t n = static_cast<int64_t>(all.size());
  launch->first_rank = first < end ? first : n;
  launch->last_rank = first < end ? end - 1 : n - 1;
  return absl::OkStatus();
}

// Joins the hosts' job of case `c` (its rank lists spelled out) as the host
// of global ranks s.launch.first_rank..last_rank, then points `launch` at
// this host's participants and the job. Errors are verify's (Fail): bad
// --ranks, and JoinFailed's.
absl::Status JoinCrossMeshHosts(const CrossMeshCase& c, const CrossMeshPlan& plan,
                                const CrossMeshVerifySettings& s, LaunchOptions* launch,
                                std::unique_ptr<JobMembership>* job) {
  if (absl::Status ok = HostParticipants(plan, launch); !ok.ok()) {
    return Fail(ok.message(), kExitBadInput);
  }
  CrossMeshCase spelled = c;
  spelled.src_ranks = plan.src_ranks;
  spelled.dst_ranks = plan.dst_ranks;
  VerifyJobInputs in;
  in.cross = &spelled;
  in.seed = s.seed;
  in.mode = s.mode;
  absl::StatusOr<std::unique_ptr<JobMembership>> joined =
      JoinHosts(VerifyJob(in, s.launch, s.fault), plan.participants.back() + 1, s.launch);
  if (!joined.ok()) return JoinFailed(joined.status());
  *job = *std::move(joined);
  launch->job_membership = job->get();
  return absl::OkStatus();
}

void PrintFailure(const std::string& command_line, const std::string& detail) {
  std::cout << "FAIL " << command_line << "\n    " << detail << "\n" << std::flush;
  std::cerr << "reshard verify: case failed: " << Utf8Valid(detail) << "\n";
}

CommandResult RunOneCase(const FlagValues& flags, const CrossMeshVerifySettings& s) {
  absl::StatusOr<CrossMeshCase> c = CaseFromFlags(flags, s);
  if (c.ok() && flags.Has("rank")) {  // hidden: a child of --processes
    absl::StatusOr<int64_t> rank = ParseInt("rank", flags.Get("rank"));
    if (!rank.ok()) return Fail(rank.status().message(), kExitBadInput);
    if (!flags.Has("store-dir")) return Fail("--rank needs --store-dir", kExitBadInput);
    return RunCrossMeshChild(
        *c, ChildRank{*rank, flags.Get("store-dir"), flags.Get("job", "case0")}, s.launch, s.fault);
  }
  absl::StatusOr<CrossMeshPlan> plan = c.ok() ? PlanCrossMeshCase(*c) : c.status();
  if (!plan.ok() && IsSkip(plan.status())) {
    std::cout << "skipped: " << plan.status().message() << "\n0 passed, 0 failed\n";
    std::cerr << "reshard verify: skipped: " << Utf8Valid(plan.status().message()) << "\n";
    return kExitNoPlan;
  }
  if (!plan.ok()) return Fail(plan.status().message(), kExitBadInput);
  if (absl::Status ok = CheckLimits(*c, *plan, s); !ok.ok()) {
    return Fail(ok.message(), kExitBadInput);
  }
  LaunchOptions launch = LaunchFor(*c, s, "case0");
  std::unique_ptr<JobMembership> job;
  if (launch.on == RanksOn::kHosts) {
    RESHARD_RETURN_IF_ERROR(JoinCrossMeshHosts(*c, *plan, s, &launch, &job));
  }
  const CrossMeshReport r = VerifyCrossMesh(*c, launch, s.fault);
  const bool passed = r.report.outcome == Outcome::kPassed;
  const absl::Status alive = JobGoesOn(job.get());
  if (job != nullptr && alive.ok()) {
    job->Finish(passed ? "1 passed, 0 failed" : "0 passed, 1 failed");
  }
  if (!passed) PrintFailure(c->CommandLine() + s.mode_flags, r.report.detail);
  std::cout << (passed ? "1 passed, 0 failed\n" : "0 passed, 1 failed\n");
  if (!alive.ok()) return Fail(absl::StrCat("the job stopped: ", alive.message()), kExitInternal);
  return passed ? kExitOk : kExitInternal;
}

// What the passed cases' crossings covered (the coverage lines on stderr).
struct Coverage {
  std::array<int64_t, 3> rank_sets{};  // by RankSets
  int64_t remeshes = 0, slices = 0, bytes = 0, participants = 0;
  int64_t in_rounds = 0, rounds = 0, most_rounds = 0;  // crossings of several rounds
  int64_t relayed = 0;  // crossings relayed (their rounds pipeline: not counted above)
  int64_t staged = 0;   // crossings spread over rails (pipelined too, not counted above)
  std::array<int64_t, kNumStepKinds> steps{};

  void Add(const CrossMeshReport& r) {
    ++rank_sets[static_cast<int>(r.rank_sets)];
    remeshes += r.remesh;
    slices += r.slices;
    bytes += r.bytes_sent;
    participants = std::max(participants, r.participants);
    relayed += r.relayed && !r.staged;
    staged += r.staged;
    if (r.rounds > 1 && !r.relayed) {
      ++in_rounds;
      rounds += r.rounds;
      most_rounds = std::max(most_rounds, r.rounds);
    }
    for (int k = 0; k < kNumStepKinds; ++k) steps[k] += r.report.steps_by_kind[k];
  }

  void Print() const {
    std::cerr << absl::StrFormat(
        "verify: crossings in passed cases: %d (%d disjoint, %d overlapping, %d equal rank "
        "sets, %d of them remeshes), %d slices, %d bytes sent, at most %d participants\n",
        rank_sets[0] + rank_sets[1] + rank_sets[2], rank_sets[0], rank_sets[1], rank_sets[2],
        remeshes, slices, bytes, participants);
    std::vector<std::string> kinds;
    for (StepKind kind : kAllStepKinds) {
      kinds.push_back(absl::StrCat(StepKindName(kind), " ", steps[static_cast<int>(kind)]));
    }
    std::cerr << "verify: steps before and after them: " << absl::StrJoin(kinds, ", ") << "\n";
    if (in_rounds > 0) {
      std::cerr << absl::StrFormat(
          "verify: crossings in rounds (under a memory limit): %d, %d rounds, at most %d in one\n",
          in_rounds, rounds, most_rounds);
    }
    if (relayed > 0) {
      std::cerr << "verify: crossings relayed by destination ranks (spec §14 \"Relaying\"): "
                << relayed << "\n";
    }
    if (staged > 0) {
      std::cerr << "verify: crossings spread over the receiving hosts' rails (spec §14 "
                   "\"Rails\"): "
                << staged << "\n";
    }
  }
};

// The random cases' cost model, from the flags, checked as a request with
// the mode would be (InvalidArgument naming the flag); on an empty case.
absl::StatusOr<CrossMeshCase> RandomCasesModel(const FlagValues& flags,
                                               const CrossMeshVerifySettings& s) {
  RequestFields fields;
  fields.mesh = {1};
  fields.shape = {1};
  fields.src = fields.dst = "R";
  fields.mode = std::string(PlanModeName(s.mode));
  RESHARD_RETURN_IF_ERROR(ReadCostModelFlags(flags, &fields));
  RESHARD_RETURN_IF_ERROR(RequestFromFields(fields, FieldStyle::kFlag).status());
  CrossMeshCase c;
  RESHARD_RETURN_IF_ERROR(WithCostModel(fields, flags, &c));
  return c;
}

CommandResult RunRandomCases(const FlagValues& flags, const CrossMeshVerifySettings& s) {
  absl::StatusOr<int64_t> count = ParseRandomCount(
      flags, {"mesh", "shape", "src", "dst", "dtype", "dst-mesh", "src-ranks", "dst-ranks"});
  if (!count.ok()) return Fail(count.status().message(), kExitBadInput);
  absl::StatusOr<CrossMeshCase> model = RandomCasesModel(flags, s);
  if (!model.ok()) return Fail(model.status().message(), kExitBadInput);
  const int64_t max_union = s.limits.max_ranks + s.limits.max_ranks / 2;
  int64_t passed = 0, failed = 0, skipped = 0, unsupported = 0;
  Coverage coverage;
  for (int64_t i = 0; i < *count; ++i) {
    CrossMeshCase c = RandomCrossMeshCase(static_cast<uint64_t>(s.seed) * 1000003u + i,
                                          s.limits.max_ranks, max_union);
    c.mode = s.mode;
    c.cost_model = model->cost_model;
    c.cost_model_name = model->cost_model_name;
    c.profile = model->profile;
    c.devices_per_host = model->devices_per_host;
    if (s.memory_rounds) {
      // Spec §14 "Memory": a limit under the crossing's peak, from its plan without one.
      if (absl::StatusOr<CrossMeshPlan> unlimited = PlanCrossMeshCase(c); unlimited.ok()) {
        c.max_memory = MemoryForRounds(*unlimited);
      }
    }
    const CrossMeshReport r = VerifyCrossMesh(c, LaunchFor(c, s, absl::StrCat("case", i)));
    if (r.report.outcome == Outcome::kPassed) {
      ++passed;
      coverage.Add(r);
    } else if (r.report.outcome == Outcome::kSkipped) {
      ++skipped;
      unsupported += r.report.unsupported;
    } else {
      ++failed;
      PrintFailure(c.CommandLine() + s.mode_flags, r.report.detail);
    }
    if ((i + 1) % 25 == 0 || i + 1 == *count) {
      std::cerr << absl::StrFormat("verify: %d/%d cases (%d passed, %d failed, %d skipped)\n",
                                   i + 1, *count, passed, failed, skipped);
    }
  }
  coverage.Print();
  if (skipped > 0) {
    std::cout << skipped << " skipped: " << skipped - unsupported << " without a plan, "
              << unsupported << " needing R->P(prod)\n";
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed > 0 ? kExitInternal : kExitOk;
}

}  // namespace

CrossMeshCase CrossMeshCaseOf(const RequestFields& fields) {
  CrossMeshCase c;
  c.mesh = fields.mesh;
  c.dst_mesh = fields.dst_mesh.empty() ? fields.mesh : fields.dst_mesh;
  c.src_ranks = fields.src_ranks;
  c.dst_ranks = fields.dst_ranks;
  c.shape = fields.shape;
  c.dtype = *ParseDType(fields.dtype);
  c.src = fields.src;
  c.dst = fields.dst;
  return c;
}

bool WantsCrossMesh(const FlagValues& flags) {
  if (flags.Has("cross-mesh")) return true;
  for (const char* flag : kCrossMeshFlags) {
    if (flags.Has(flag)) return true;
  }
  return false;
}

CommandResult RunCrossMeshVerify(const FlagValues& flags, const CrossMeshVerifySettings& settings) {
  CrossMeshVerifySettings s = settings;
  if (flags.Has("plan-max-memory")) {
    absl::StatusOr<int64_t> bytes = ParseByteSize("plan-max-memory", flags.Get("plan-max-memory"));
    if (!bytes.ok()) return Fail(bytes.status().message(), kExitBadInput);
    if (*bytes < 1) return Fail("--plan-max-memory: must be at least 1 byte", kExitBadInput);
    s.plan_max_memory = *bytes;
  }
  s.memory_rounds = flags.Has("memory-rounds");
  if (flags.Has("random")) return RunRandomCases(flags, s);
  return RunOneCase(flags, s);
}

}  // namespace reshard
