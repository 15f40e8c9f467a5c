// reshard verify: run plans on real data with the Gloo backend and check the
// results against shards computed directly (harness/verify_runner.h).
//
// Ranks are threads of this process by default; with --processes or --store
// each rank is a child process, this binary started again with the case's
// flags and the hidden --rank, --store-dir and --job (harness/run_ranks.h).
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/backend_command_summaries.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "cli/request_flags.h"
#include "cli/verify/verify_cross_mesh.h"
#include "cli/verify/verify_hosts.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/gloo/listen_address.h"
#include "collectives/stores/redis_store.h"
#include "formats/request_json.h"
#include "harness/host_memory.h"
#include "harness/job_membership.h"
#include "harness/verify_runner.h"

namespace reshard {
namespace {

// Everything but the case itself: how ranks run and what is refused.
struct VerifySettings {
  int64_t seed = 0;
  PlanMode mode = PlanMode::kNative;
  bool processes = false;
  LaunchOptions launch;  // Gloo options, and where ranks run and meet
  Fault fault;
  VerifyLimits limits;
  // Printed after a failing case so that the line reruns it the same way.
  std::string mode_flags;
};

// A failed case: the line that reruns it and why on stdout (the result), why
// on stderr too (the error).
void PrintFailure(const std::string& command_line, const std::string& detail) {
  std::cout << "FAIL " << command_line << "\n    " << detail << "\n" << std::flush;
  std::cerr << "reshard verify: case failed: " << Utf8Valid(detail) << "\n";
}

// Several hosts (--store): joins the job of `in` before any rank starts and
// points s->launch.job_membership at it; nothing to do on one host.
absl::Status JoinIfHosts(const VerifyJobInputs& in, int64_t num_ranks, VerifySettings* s,
                         std::unique_ptr<JobMembership>* job) {
  if (s->launch.store_url.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<JobMembership>> joined =
      JoinHosts(VerifyJob(in, s->launch, s->fault), num_ranks, s->launch);
  if (!joined.ok()) return joined.status();
  *job = *std::move(joined);
  s->launch.job_membership = job->get();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> IntFlag(const FlagValues& flags, absl::string_view name,
                                absl::string_view fallback) {
  return ParseInt(name, flags.Get(name, fallback));
}

// --store URL --ranks A-B (several hosts), --hostname, --interface.
absl::Status ParseHosts(const FlagValues& flags, LaunchOptions* o) {
  o->store_url = flags.Get("store");
  o->gloo.hostname = flags.Get("hostname", o->gloo.hostname);
  o->gloo.interface = flags.Get("interface");
  if (flags.Has("hostname") || flags.Has("interface")) {
    // A typo here is bad input, found before any rank starts.
    if (absl::Status s = CheckListenAddress(o->gloo); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--", s.message()));
    }
  }
  if (!o->store_url.empty()) {
    // Up front, so that a bad URL or an unreachable server is one message,
    // not one per rank.
    RESHARD_RETURN_IF_ERROR(NewStoreFromUrl(o->store_url, o->gloo.timeout).status());
  }
  if (!flags.Has("ranks")) return absl::OkStatus();
  if (o->store_url.empty()) {
    return absl::InvalidArgumentError(
        "--ranks needs --store (where the ranks of the other hosts are met)");
  }
  // A (one rank) or A-B.
  const std::string text = flags.Get("ranks");
  const size_t dash = text.find('-');
  const bool one = dash == std::string::npos;
  if (!absl::SimpleAtoi(text.substr(0, dash), &o->first_rank) ||
      !absl::SimpleAtoi(one ? text : text.substr(dash + 1), &o->last_rank) || o->first_rank < 0 ||
      o->last_rank < o->first_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ranks: \"", Abbreviate(text, 64),
                     "\" is neither a rank A nor a range of ranks A-B with 0 <= A <= B"));
  }
  return absl::OkStatus();
}

absl::Status ParseFault(const FlagValues& flags, VerifySettings* s) {
  if (flags.Has("kill-at") && !flags.Has("kill-rank")) {
    return absl::InvalidArgumentError("--kill-at needs --kill-rank (the rank that dies)");
  }
  if (flags.Has("kill-rank") && flags.Has("random")) {
    return absl::InvalidArgumentError(
        "--kill-rank describes a fault in one case; it cannot go with --random");
  }
  Fault& fault = s->fault;
  RESHARD_ASSIGN_OR_RETURN(fault.rank, IntFlag(flags, "kill-rank", "-1"));
  RESHARD_ASSIGN_OR_RETURN(fault.at_call, IntFlag(flags, "kill-at", "0"));
  if (flags.Has("kill-rank") && fault.rank < 0) {
    return absl::InvalidArgumentError("--kill-rank: must be a rank of the mesh (>= 0)");
  }
  if (fault.at_call < 0) return absl::InvalidArgumentError("--kill-at: must be >= 0");
  return absl::OkStatus();
}

absl::StatusOr<VerifySettings> ParseSettings(const FlagValues& flags) {
  VerifySettings s;
  RESHARD_ASSIGN_OR_RETURN(s.seed, IntFlagIn(flags, "seed", 0, 0, int64_t{1} << 62));  // as bench
  RESHARD_ASSIGN_OR_RETURN(int64_t timeout, IntFlag(flags, "timeout", "30"));
  if (timeout < 1) return absl::InvalidArgumentError("--timeout: must be at least 1 second");
  s.launch.gloo.timeout = absl::Seconds(timeout);
  // Greedy is a pytorch-mode planner: asking for it without a mode asks for that mode.
  const bool greedy = flags.Get("algorithm") == AlgorithmName(Algorithm::kGreedy);
  const std::optional<PlanMode> mode =
      ParsePlanMode(flags.Get("mode", greedy ? "pytorch" : "native"));
  if (!mode.has_value() || *mode == PlanMode::kAuto) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode: unknown mode '", flags.Get("mode"), "'; use native or pytorch"));
  }
  s.mode = *mode;
  s.processes = flags.Has("processes");
  RESHARD_RETURN_IF_ERROR(ParseFault(flags, &s));
  RESHARD_RETURN_IF_ERROR(ParseHosts(flags, &s.launch));
  const bool random = flags.Has("random");
  RESHARD_ASSIGN_OR_RETURN(s.limits.max_ranks, IntFlag(flags, "max-ranks", random ? "8" : "64"));
  if (s.limits.max_ranks < 1 || s.limits.max_ranks > 4096) {
    return absl::InvalidArgumentError(
        "--max-ranks: must be between 1 and 4096 (each rank is a thread or process)");
  }
  s.limits.max_bytes = DefaultMaxHostMemory();
  if (flags.Has("max-memory")) {
    RESHARD_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize("max-memory", flags.Get("max-memory")));
    s.limits.max_bytes = static_cast<double>(bytes);
  }
  if (s.processes) absl::StrAppend(&s.mode_flags, " --processes");
  if (flags.Has("timeout")) absl::StrAppend(&s.mode_flags, " --timeout ", timeout);
  if (s.fault.rank >= 0) {
    absl::StrAppend(&s.mode_flags, " --kill-rank ", s.fault.rank, " --kill-at ", s.fault.at_call);
  }
  return s;
}

// The argv that runs one rank of `c` in a child process (RunRanks adds
// --rank, --store-dir and --job).
std::vector<std::string> ChildArgs(const VerifyCase& c, const VerifySettings& s) {
  std::vector<std::string> args = {"reshard", "verify"};
  if (s.fault.rank >= 0) {
    args.insert(args.end(), {"--kill-rank", absl::StrCat(s.fault.rank), "--kill-at",
                             absl::StrCat(s.fault.at_call)});
  }
  const LaunchOptions& o = s.launch;
  if (!o.store_url.empty()) args.insert(args.end(), {"--store", o.store_url});
  if (!o.gloo.interface.empty()) args.insert(args.end(), {"--interface", o.gloo.interface});
  args.insert(args.end(), {"--hostname", o.gloo.hostname, "--mesh", absl::StrJoin(c.mesh, ","),
                           "--shape", absl::StrJoin(c.shape, ","), "--dtype",
                           std::string(DTypeName(c.dtype)), "--src=" + c.src, "--dst=" + c.dst,
                           "--algorithm", std::string(AlgorithmName(c.algorithm)), "--mode",
                           std::string(PlanModeName(c.mode)), "--seed", absl::StrCat(c.data_seed),
                           "--timeout", absl::StrCat(absl::ToInt64Seconds(o.gloo.timeout))});
  return args;
}

// `job` names the case in the store that the ranks share.
CaseReport RunCase(const VerifyCase& c, const VerifySettings& s, const std::string& job) {
  return VerifyOnRanks(c, CaseLaunch(s.launch, s.processes, ChildArgs(c, s), job), s.fault);
}

// Two lines on stderr: steps of every kind in passed cases, then those of
// the collectives that ran over several mesh dims (native mode's group
// steps; permutes and exchanges are counted in the first line).
void PrintCoverage(const std::array<int64_t, kNumStepKinds>& steps,
                   const std::array<int64_t, kNumStepKinds>& group_steps) {
  std::vector<std::string> coverage, groups;
  for (StepKind kind : kAllStepKinds) {
    const int k = static_cast<int>(kind);
    coverage.push_back(absl::StrCat(StepKindName(kind), " ", steps[k]));
    if (IsCommunicating(kind) && !MovesSlices(kind)) {
      groups.push_back(absl::StrCat(StepKindName(kind), " ", group_steps[k]));
    }
  }
  std::cerr << "verify: steps in passed cases: " << absl::StrJoin(coverage, ", ") << "\n";
  std::cerr << "verify: of those, over several mesh dims: " << absl::StrJoin(groups, ", ") << "\n";
}

CommandResult RunRandomCases(const FlagValues& flags, const VerifySettings& settings) {
  absl::StatusOr<int64_t> count =
      ParseRandomCount(flags, {"mesh", "shape", "src", "dst", "dtype", "algorithm", "rank"});
  if (!count.ok()) return Fail(count.status().message(), kExitBadInput);
  VerifySettings s = settings;
  std::unique_ptr<JobMembership> job;
  if (absl::Status joined = JoinIfHosts({nullptr, *count, s.limits.max_ranks, s.seed, s.mode},
                                        s.limits.max_ranks, &s, &job);
      !joined.ok()) {
    return JoinFailed(joined);
  }
  int64_t passed = 0, failed = 0, skipped = 0, unsupported = 0;
  std::array<int64_t, kNumStepKinds> steps{}, group_steps{};
  absl::Status stopped;
  for (int64_t i = 0; i < *count && stopped.ok(); ++i) {
    const VerifyCase c =
        RandomCase(static_cast<uint64_t>(s.seed) * 1000003u + i, s.limits.max_ranks, s.mode);
    const CaseReport r = RunCase(c, s, absl::StrCat("case", i));
    if (r.outcome == Outcome::kPassed) {
      ++passed;
      for (int k = 0; k < kNumStepKinds; ++k) {
        steps[k] += r.steps_by_kind[k];
        group_steps[k] += r.group_steps_by_kind[k];
      }
    } else if (r.outcome == Outcome::kSkipped) {
      ++skipped;
      unsupported += r.unsupported;
    } else {
      ++failed;
      PrintFailure(c.CommandLine() + s.mode_flags, r.detail);
    }
    if ((i + 1) % 25 == 0 || i + 1 == *count) {
      std::cerr << absl::StrFormat("verify: %d/%d cases (%d passed, %d failed, %d skipped)\n",
                                   i + 1, *count, passed, failed, skipped);
    }
    stopped = JobGoesOn(job.get());
    if (!stopped.ok()) {
      std::cerr << "reshard verify: "
                << Utf8Valid(absl::StrFormat("stopped after case %d of %d: %s", i + 1, *count,
                                             stopped.message()))
                << "\n";
    }
  }
  PrintCoverage(steps, group_steps);
  if (skipped > 0) {
    std::cout << skipped << " skipped: " << skipped - unsupported << " without a plan, "
              << unsupported << " needing R->P(prod)\n";
  }
  const std::string summary = absl::StrCat(passed, " passed, ", failed, " failed");
  std::cout << summary << "\n";
  if (job != nullptr && stopped.ok()) job->Finish(summary);
  return failed > 0 || !stopped.ok() ? kExitInternal : kExitOk;
}

// The case the flags describe, validated as `reshard plan` validates them,
// so that every message names its flag.
absl::StatusOr<VerifyCase> CaseFromFlags(const FlagValues& flags, int64_t seed, PlanMode mode) {
  RESHARD_RETURN_IF_ERROR(RequireOneCaseFlags(flags, {"mesh", "shape", "src", "dst"}));
  RequestFields request;
  RESHARD_RETURN_IF_ERROR(ReadRequestFlags(flags, &request));
  request.algorithm = flags.Get("algorithm", request.algorithm);
  request.mode = std::string(PlanModeName(mode));  // what verify plans (PlanCase)
  if (absl::StatusOr<Plan> plan = PlanFromFields(request, FieldStyle::kFlag);
      !plan.ok() && plan.status().code() == absl::StatusCode::kInvalidArgument) {
    return plan.status();  // no plan at all is a skipped case, reported below
  }
  VerifyCase c;
  c.mesh = request.mesh;
  c.shape = request.shape;
  c.dtype = *ParseDType(request.dtype);
  c.src = request.src;
  c.dst = request.dst;
  c.algorithm = *ParseAlgorithm(request.algorithm);
  c.mode = mode;
  c.data_seed = static_cast<uint64_t>(seed);
  return c;
}

// Prints one case's outcome; its exit code.
int ReportOneCase(const VerifyCase& c, const VerifySettings& s, const CaseReport& r) {
  switch (r.outcome) {
    case Outcome::kPassed:
      std::cout << "1 passed, 0 failed\n";
      return kExitOk;
    case Outcome::kSkipped:
      std::cout << "skipped: " << r.detail << "\n0 passed, 0 failed\n";
      std::cerr << "reshard verify: skipped: " << Utf8Valid(r.detail) << "\n";
      return kExitNoPlan;
    case Outcome::kFailed:
      PrintFailure(c.CommandLine() + s.mode_flags, r.detail);
      std::cout << "0 passed, 1 failed\n";
      return kExitInternal;
  }
  return kExitInternal;
}

CommandResult RunOneCase(const FlagValues& flags, const VerifySettings& settings) {
  VerifySettings s = settings;
  absl::StatusOr<VerifyCase> c = CaseFromFlags(flags, s.seed, s.mode);
  if (!c.ok()) return Fail(c.status().message(), kExitBadInput);
  if (flags.Has("rank")) {  // hidden: a child of --processes
    absl::StatusOr<int64_t> rank = ParseInt("rank", flags.Get("rank"));
    if (!rank.ok()) return Fail(rank.status().message(), kExitBadInput);
    if (!flags.Has("store-dir")) return Fail("--rank needs --store-dir", kExitBadInput);
    return RunVerifyChild(*c, ChildRank{*rank, flags.Get("store-dir"), flags.Get("job", "case0")},
                          s.launch, s.fault);
  }
  if (absl::Status ok = CheckCase(*c, s.limits, s.fault); !ok.ok() && !IsSkip(ok)) {
    return Fail(ok.message(), kExitBadInput);
  }
  int64_t ranks = 1;
  for (int64_t size : c->mesh) ranks *= size;
  if (s.launch.last_rank >= ranks) {
    return Fail(absl::StrFormat("--ranks %d-%d: the mesh has ranks 0 to %d", s.launch.first_rank,
                                s.launch.last_rank, ranks - 1),
                kExitBadInput);
  }
  std::unique_ptr<JobMembership> job;
  if (absl::Status joined = JoinIfHosts({&*c, 0, 0, s.seed, s.mode}, ranks, &s, &job);
      !joined.ok()) {
    return JoinFailed(joined);
  }
  const CaseReport r = RunCase(*c, s, "case0");
  const absl::Status alive = JobGoesOn(job.get());
  if (job != nullptr && alive.ok()) {
    job->Finish(r.outcome == Outcome::kPassed ? "1 passed, 0 failed" : "0 passed, 1 failed");
  }
  const int code = ReportOneCase(*c, s, r);
  if (!alive.ok()) return Fail(absl::StrCat("the job stopped: ", alive.message()), kExitInternal);
  return code;
}

CommandResult RunVerify(const FlagValues& flags, const std::vector<std::string>&) {
  const bool cross_mesh = WantsCrossMesh(flags);
  if (absl::Status ok = cross_mesh ? CheckCrossMeshFlags(flags) : CheckNoCrossMeshOnlyFlags(flags);
      !ok.ok()) {
    return Fail(ok.message(), kExitBadInput);
  }
  absl::StatusOr<VerifySettings> settings = ParseSettings(flags);
  if (!settings.ok()) return Fail(settings.status().message(), kExitBadInput);
  if (cross_mesh) {
    const VerifySettings& s = *settings;
    return RunCrossMeshVerify(flags, CrossMeshVerifySettings{s.seed, s.mode, s.launch, s.fault,
                                                             s.limits, s.mode_flags, s.processes});
  }
  if (flags.Has("random")) return RunRandomCases(flags, *settings);
  return RunOneCase(flags, *settings);
}

// reshard verify --help before FLAGS.
constexpr char kAbout[] =
    R"txt(reshard verify: run redistributions on real data and check every rank's result.

Each case builds a deterministic global tensor of small integers, gives each
rank its shard of --src (a Partial source gets local values whose reduction
is the tensor), plans src -> dst, runs the plan with Gloo collectives (TCP on
127.0.0.1), and compares each rank's result with its shard of --dst computed
directly: exactly for moved data and integers, to a tight tolerance after
floating-point reductions. It also checks each rank's logical shapes and bytes
sent/received per step against the plan made for that rank's coordinate.

USAGE
  One case:
    reshard verify --mesh 2,2,2 --shape 13,8 --dtype f32 --src 'S(0)RR' --dst 'RS(1)[1]S(1)[0]'
  Random cases (meshes of 1-4 dims, uneven and empty shards, shard orders,
  every transition, dtype and reduce op; native: group steps, permutes and
  exchanges;
  pytorch: graph and greedy plans):
    reshard verify --random 300 --seed 7 --max-ranks 8
    reshard verify --random 300 --seed 7 --max-ranks 8 --mode pytorch
  One process per rank instead of one thread per rank:
    reshard verify --random 20 --seed 7 --processes
  A cross-mesh move (trainer 4x2 on ranks 0-7 to inference 2 on ranks 8,9),
  and random ones (ranks as threads, or with --processes; not on hosts):
    reshard verify --mesh 4,2 --shape 16,12 --src 'S(0)S(1)' --dst-mesh 2 \
        --dst-ranks 8,9 --dst 'S(1)'
    reshard verify --random 100 --seed 7 --cross-mesh
  The same move on two hosts meeting through Redis (--ranks: global ranks),
  the trainer on one, inference on the other:
    reshard verify --mesh 4,2 ... --dst-ranks 8,9 --dst 'S(1)' \
        --store redis://HOST:6379/move1 --ranks 0-7      # host 1
    reshard verify --mesh 4,2 ... --dst-ranks 8,9 --dst 'S(1)' \
        --store redis://HOST:6379/move1 --ranks 8-9      # host 2
  The same under memory limits that split crossings into rounds:
    reshard verify --random 100 --seed 7 --cross-mesh --memory-rounds

--mesh, --shape, --src and --dst (and --dtype, --dst-mesh, --src-ranks,
--dst-ranks) describe one case, not with --random. A cross-mesh case runs
every participant (both rank sets' union) as a thread (or a process, or on
its host with --store) with source-mesh, destination-mesh and union
communicators. --mode is native by default, pytorch with --algorithm greedy
(greedy plans in pytorch mode only); native mode plans with native steps
(spec §4.2: collectives over several mesh dims, permutes, exchanges) and the
nccl cost model.

)txt";

// reshard verify --help after FLAGS, before NOTATION.
constexpr char kOutputAndExitCodes[] = R"txt(OUTPUT
  Each failing case as "FAIL reshard verify ..." (paste it back to rerun it
  alone) with the reason on the next line; on stderr, --random counts the
  steps of passed cases by kind, and those over several mesh dims (with
  --cross-mesh: the crossings by rank sets, their slices and bytes, and the
  steps before and after them); then a count of skipped cases
  (no plan exists, or the plan needs R->P(prod), which has no exact split),
  and finally the line "N passed, M failed". Progress goes to stderr.

EXIT CODES
  0  nothing failed
  1  a case failed, or the output could not be written
  2  bad input, naming the flag
  3  a single case is skipped (no plan, or it needs R->P(prod))

)txt";

// verify's flags: one case's request flags, then how cases are made and run.
std::vector<FlagSpec> Flags() {
  std::vector<FlagSpec> flags = RequestFlags({"mesh", "shape", "dtype", "src", "dst", "dst-mesh",
                                              "src-ranks", "dst-ranks", "algorithm", "mode"});
  std::vector<FlagSpec> own = {
      {"cross-mesh", "",
       "with --random: random cross-mesh cases (meshes of 1-3 dims of at most --max-ranks "
       "ranks each, at most 1.5x that in both sets' union; disjoint, overlapping and equal "
       "rank sets; uneven shapes; Partial sources and destinations)"},
      {"plan-max-memory", "BYTES",
       "a cross-mesh case: plan it under this many bytes per rank (plan's --max-memory; "
       "the crossing runs in rounds, spec §14); too little: skipped (exit code 3)"},
      {"memory-rounds", "",
       "with --random N --cross-mesh: plan each case under a limit halfway between the "
       "least its crossing needs and its peak without one (and at least the steps' peaks), "
       "so crossings run in rounds; a failing case's line gives it as --plan-max-memory"},
      {"cost-model", "NAME",
       "cross-mesh cases: plan them with this model, as reshard plan's --cost-model (default "
       "the mode's); e.g. measured with bench's profile, which relays fan-outs (spec §14)"},
      {"profile", "NAME|FILE", "cross-mesh cases: the model's profile, as reshard plan's"},
      {"devices-per-host", "N", "cross-mesh cases: the model's ranks per host, as reshard plan's"},
      {"seed", "N", "one case: the data seed; --random: the case generator's seed (default 0)"},
      {"random", "N", "run N random cases instead of one"},
      {"max-ranks", "N",
       "--random: at most N ranks per mesh (default 8; --cross-mesh: per mesh, and 1.5 N "
       "in both sets' union); one case: refuse meshes (cross-mesh: unions of both rank "
       "sets) of more than N ranks (default 64)"},
      {"max-memory", "BYTES",
       "refuse a case whose host memory, counted from its plan before anything is "
       "allocated, exceeds this (bytes, or with K, M, G, T, e.g. 16G; default half of this "
       "machine's memory or of the address-space limit, ulimit -v)"},
      {"processes", "", "one process per rank (a file store in a temporary directory)"},
      {"timeout", "S", "seconds a rank waits for its peers before failing (default 30)"},
      {"store", "URL",
       "ranks on several hosts meet through redis://HOST:PORT/PREFIX (IPv6 as [ADDR]; a "
       "fresh PREFIX per run; no user:password, the store sends no AUTH) or a shared "
       "directory; each host runs its --ranks as processes, and every "
       "host checks every rank's result (exchanged in the store). Cross-mesh: one case, "
       "not --random"},
      {"ranks", "A-B",
       "the ranks this host runs, A-B or one rank A (with --store; default all). A cross-mesh "
       "case's are global "
       "ranks (as in --src-ranks, --dst-ranks): the host runs the participants among A-B, "
       "and the hosts' ranges together cover 0 to the largest participant"},
      {"hostname", "ADDR", "the address this host's ranks listen on (default 127.0.0.1)"},
      {"interface", "NAME", "the network interface to listen on instead (e.g. eth1)"},
      {"kill-rank", "R",
       "fault injection (one case): rank R dies (closes its connections; with "
       "--processes, its process exits) just before its collective call --kill-at; the "
       "case must then fail with the surviving ranks' errors, which name the step and "
       "mesh dim. A rank outside the mesh is refused"},
      {"kill-at", "K",
       "with --kill-rank: the collective call (0-based, default 0) before which the rank "
       "dies; a K past the plan's last collective call is refused. A cross-mesh case's "
       "--kill-rank is a global rank, dying at its crossing (--kill-at 0 only)"},
  };
  flags.insert(flags.end(), own.begin(), own.end());
  const std::vector<FlagSpec> child = ChildRankFlags();  // --processes, --store
  flags.insert(flags.end(), child.begin(), child.end());
  return flags;
}

}  // namespace

Command VerifyCommand() {
  return {"verify",
          kVerifySummary,
          kAbout,
          Flags(),
          absl::StrCat(kOutputAndExitCodes, ModesHelp(), "\n", NotationHelp()),
          "reshard verify",
          RunVerify};
}

}  // namespace reshard
