// reshard verify: run plans on real data with the Gloo backend and check the
// results against shards computed directly (collectives/verify/verify.h).
//
// Ranks are threads of this process by default; with --processes each rank
// is a child process: this same binary, started with the hidden flags
// --rank and --store-dir (a temporary directory holding Gloo's file store
// and each rank's result), and the parent checks what the children wrote.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "collectives/gloo/gloo_communicator.h"
#include "collectives/stores/file_store.h"
#include "collectives/verify/faulty_communicator.h"
#include "collectives/verify/verify.h"

namespace reshard {
namespace {

std::string VerifyHelp() {
  return absl::StrCat(R"txt(reshard verify: run redistributions on real data and check every rank's result.

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
  every transition, dtype and reduce op, graph and greedy plans):
    reshard verify --random 300 --seed 7 --max-ranks 8
  One process per rank instead of one thread per rank:
    reshard verify --random 20 --seed 7 --processes

FLAGS
  --mesh 2,2,2         mesh sizes (one case)
  --shape 13,8         global tensor shape (one case)
  --dtype f32          f64 f32 f16 bf16 i64 i32 i16 i8 u8 (default f32)
  --src, --dst         layouts in the notation below (one case)
  --algorithm auto     auto, graph or greedy
  --seed N             one case: the data seed; --random: the case generator's seed (default 0)
  --random N           run N random cases instead of one
  --max-ranks 8        --random: at most this many ranks per mesh
  --processes          one process per rank (a file store in a temporary directory)
  --timeout 30         seconds a rank waits for its peers before failing
  --kill-rank R        fault injection: rank R dies (closes its connections; with
  --kill-at K            --processes, its process exits) just before its collective
                         call K (0-based, default 0); the case must then fail with
                         the surviving ranks' errors, which name the step and mesh dim

OUTPUT
  Each failing case as "FAIL reshard verify ..." (paste it back to rerun it
  alone) with the reason on the next line, then a count of skipped cases
  (no plan exists, or the plan needs R->P(prod), which has no exact split),
  and finally the line "N passed, M failed". Progress goes to stderr.
  Exit code 0 if nothing failed, 1 if a case failed, 2 for bad input,
  3 when a single case is skipped (no plan, or it needs R->P(prod)).

)txt",
                      NotationHelp());
}

int Fail(absl::string_view message, int code) {
  std::cerr << "reshard verify: " << message << "\n";
  return code;
}

// The argv that runs one rank of `c` in a child process.
std::vector<std::string> ChildArgs(const VerifyCase& c, int64_t rank, const std::string& dir,
                                   int64_t timeout_s, const Fault& fault) {
  return {"reshard",     "verify",
          "--kill-rank", absl::StrCat(fault.rank),
          "--kill-at",   absl::StrCat(fault.at_call),
          "--mesh",      absl::StrJoin(c.mesh, ","),
          "--shape",     absl::StrJoin(c.shape, ","),
          "--dtype",     std::string(DTypeName(c.dtype)),
          "--src",       c.src,
          "--dst",       c.dst,
          "--algorithm", std::string(AlgorithmName(c.algorithm)),
          "--seed",      absl::StrCat(c.data_seed),
          "--timeout",   absl::StrCat(timeout_s),
          "--rank",      absl::StrCat(rank),
          "--store-dir", dir};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Child side: one rank of the case, results into the store directory.
int RunChildRank(const VerifyCase& c, int64_t rank, const std::string& dir,
                 const GlooOptions& options, const Fault& fault) {
  auto fail = [&](const absl::Status& s) {
    std::ofstream(absl::StrCat(dir, "/error.", rank)) << s.ToString();
    return kExitInternal;
  };
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) return fail(p.status());
  std::shared_ptr<Store> store = NewFileStore(dir);
  absl::StatusOr<std::unique_ptr<GlooCommunicator>> comm =
      GlooCommunicator::Connect(p->src.mesh(), rank, store, options);
  if (!comm.ok()) return fail(comm.status());
  absl::StatusOr<RankResult> r = absl::UnknownError("not run");
  if (rank == fault.rank) {
    FaultyCommunicator faulty(**comm, fault.at_call, [] { _exit(9); });
    r = RunRank(*p, faulty);
  } else {
    r = RunRank(*p, **comm);
  }
  if (!r.ok()) return fail(r.status());
  if (absl::Status s = WriteRankResult(dir, rank, *r); !s.ok()) return fail(s);
  // Keep the connections open until every rank is done (a peer may still be
  // reading what this rank sent).
  // Our own result is written; a peer that never finished fails the case
  // itself, so a store error here is no error of this rank.
  const absl::Time deadline = absl::Now() + options.timeout;
  if (store->Set(absl::StrCat("done/", rank), {'1'}).ok()) {
    for (int64_t k = 0; k < p->src.mesh().num_ranks(); ++k) {
      if (!store->Get(absl::StrCat("done/", k), deadline - absl::Now()).ok()) break;
    }
  }
  return kExitOk;
}

// Parent side: one child process per rank, then Check.
CaseReport VerifyInProcesses(const VerifyCase& c, const GlooOptions& options, const Fault& fault) {
  const int64_t timeout_s = absl::ToInt64Seconds(options.timeout);
  absl::StatusOr<PreparedCase> p = Prepare(c);
  if (!p.ok()) {
    if (IsSkip(p.status())) {
      CaseReport r;
      r.outcome = Outcome::kSkipped;
      r.detail = std::string(p.status().message());
      r.unsupported = p.status().code() == absl::StatusCode::kUnimplemented;
      return r;
    }
    return {Outcome::kFailed, absl::StrCat("bad case: ", p.status().ToString())};
  }
  char pattern[] = "/tmp/reshard-verify-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return {Outcome::kFailed, "cannot create a temporary directory"};
  const std::string dir = pattern;
  const int64_t n = p->src.mesh().num_ranks();
  std::vector<pid_t> pids;
  for (int64_t rank = 0; rank < n; ++rank) {
    const std::vector<std::string> args = ChildArgs(c, rank, dir, timeout_s, fault);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string log = absl::StrCat(dir, "/log.", rank);
    std::cout.flush();
    const pid_t pid = fork();
    if (pid == 0) {
      if (freopen(log.c_str(), "w", stdout) == nullptr || freopen(log.c_str(), "a", stderr) == nullptr) {
        _exit(127);
      }
      execv("/proc/self/exe", argv.data());
      _exit(127);
    }
    pids.push_back(pid);  // -1 when fork failed: that rank fails below
  }
  // Every rank gives up on its peers after the timeout; allow for start-up.
  const absl::Time deadline = absl::Now() + absl::Seconds(2 * timeout_s + 10);
  std::vector<int> exit_codes(n, -1);
  for (int64_t done = 0; done < n;) {
    done = 0;
    for (int64_t r = 0; r < n; ++r) {
      if (exit_codes[r] != -1 || pids[r] <= 0) {
        ++done;
        continue;
      }
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        exit_codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ++done;
      }
    }
    if (done < n && absl::Now() > deadline) {
      for (int64_t r = 0; r < n; ++r) {
        if (exit_codes[r] == -1 && pids[r] > 0) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          exit_codes[r] = 128 + SIGKILL;
        }
      }
      break;
    }
    if (done < n) absl::SleepFor(absl::Milliseconds(5));
  }
  std::vector<absl::StatusOr<RankResult>> results;
  for (int64_t r = 0; r < n; ++r) {
    if (exit_codes[r] == 0) {
      results.push_back(ReadRankResult(dir, r, *p));
      continue;
    }
    std::string why = ReadFile(absl::StrCat(dir, "/error.", r));
    if (why.empty()) why = ReadFile(absl::StrCat(dir, "/log.", r));
    results.push_back(absl::InternalError(
        absl::StrFormat("process exited with %d: %s", exit_codes[r], why)));
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return Check(*p, results);
}

}  // namespace

int RunVerifyCommand(const std::vector<std::string>& args) {
  FlagParser parser("verify", {{"mesh", true},      {"shape", true},     {"dtype", true},
                               {"src", true},       {"dst", true},       {"algorithm", true},
                               {"seed", true},      {"random", true},    {"max-ranks", true},
                               {"processes", false}, {"timeout", true},  {"rank", true},
                               {"store-dir", true}, {"kill-rank", true}, {"kill-at", true},
                               {"help", false}});
  absl::StatusOr<FlagValues> flags = parser.Parse(args);
  if (!flags.ok()) return Fail(flags.status().message(), kExitBadInput);
  if (flags->Has("help")) {
    std::cout << VerifyHelp();
    return kExitOk;
  }
  absl::StatusOr<int64_t> seed = ParseInt("seed", flags->Get("seed", "0"));
  if (!seed.ok()) return Fail(seed.status().message(), kExitBadInput);
  absl::StatusOr<int64_t> timeout = ParseInt("timeout", flags->Get("timeout", "30"));
  if (!timeout.ok()) return Fail(timeout.status().message(), kExitBadInput);
  if (*timeout < 1) return Fail("--timeout: must be at least 1 second", kExitBadInput);
  GlooOptions options;
  options.timeout = absl::Seconds(*timeout);
  Fault fault;
  absl::StatusOr<int64_t> kill_rank = ParseInt("kill-rank", flags->Get("kill-rank", "-1"));
  if (!kill_rank.ok()) return Fail(kill_rank.status().message(), kExitBadInput);
  absl::StatusOr<int64_t> kill_at = ParseInt("kill-at", flags->Get("kill-at", "0"));
  if (!kill_at.ok()) return Fail(kill_at.status().message(), kExitBadInput);
  if (*kill_at < 0) return Fail("--kill-at: must be >= 0", kExitBadInput);
  fault.rank = *kill_rank;
  fault.at_call = *kill_at;
  // Printed after a failing case so that the line reruns it the same way.
  std::string mode_flags;
  if (flags->Has("processes")) absl::StrAppend(&mode_flags, " --processes");
  if (flags->Has("timeout")) absl::StrAppend(&mode_flags, " --timeout ", *timeout);
  if (fault.rank >= 0) {
    absl::StrAppend(&mode_flags, " --kill-rank ", fault.rank, " --kill-at ", fault.at_call);
  }

  if (flags->Has("random")) {
    for (const char* single : {"mesh", "shape", "src", "dst", "dtype", "algorithm", "rank"}) {
      if (flags->Has(single)) {
        return Fail(absl::StrCat("--", single, " describes one case; it cannot go with --random"),
                    kExitBadInput);
      }
    }
    absl::StatusOr<int64_t> count = ParseInt("random", flags->Get("random"));
    if (!count.ok()) return Fail(count.status().message(), kExitBadInput);
    absl::StatusOr<int64_t> max_ranks = ParseInt("max-ranks", flags->Get("max-ranks", "8"));
    if (!max_ranks.ok()) return Fail(max_ranks.status().message(), kExitBadInput);
    if (*count < 0) return Fail("--random: the number of cases must be >= 0", kExitBadInput);
    if (*max_ranks < 1 || *max_ranks > 64) {
      return Fail("--max-ranks: must be between 1 and 64 (each rank is a thread or process)",
                  kExitBadInput);
    }
    int64_t passed = 0, failed = 0, skipped = 0, unsupported = 0;
    std::array<int64_t, kNumStepKinds> steps{};
    for (int64_t i = 0; i < *count; ++i) {
      const VerifyCase c = RandomCase(static_cast<uint64_t>(*seed) * 1000003u + i, *max_ranks);
      const CaseReport r = flags->Has("processes")
                               ? VerifyInProcesses(c, options, fault)
                               : VerifyOnThreads(c, options, fault);
      switch (r.outcome) {
        case Outcome::kPassed:
          ++passed;
          for (int k = 0; k < kNumStepKinds; ++k) steps[k] += r.steps_by_kind[k];
          break;
        case Outcome::kSkipped:
          ++skipped;
          unsupported += r.unsupported;
          break;
        case Outcome::kFailed:
          ++failed;
          std::cout << "FAIL " << c.CommandLine() << mode_flags << "\n    " << r.detail << "\n"
                    << std::flush;
          break;
      }
      if ((i + 1) % 25 == 0 || i + 1 == *count) {
        std::cerr << absl::StrFormat("verify: %d/%d cases (%d passed, %d failed, %d skipped)\n",
                                     i + 1, *count, passed, failed, skipped);
      }
    }
    std::vector<std::string> coverage;
    for (StepKind kind : kAllStepKinds) {
      coverage.push_back(absl::StrCat(StepKindName(kind), " ", steps[static_cast<int>(kind)]));
    }
    std::cerr << "verify: steps in passed cases: " << absl::StrJoin(coverage, ", ") << "\n";
    if (skipped > 0) {
      std::cout << skipped << " skipped: " << skipped - unsupported << " without a plan, "
                << unsupported << " needing R->P(prod)\n";
    }
    std::cout << passed << " passed, " << failed << " failed\n";
    return failed > 0 ? kExitInternal : kExitOk;
  }

  for (const char* required : {"mesh", "shape", "src", "dst"}) {
    if (!flags->Has(required)) {
      return Fail(absl::StrCat("--", required,
                               " is required for one case (or give --random N; see --help)"),
                  kExitBadInput);
    }
  }
  VerifyCase c;
  absl::StatusOr<std::vector<int64_t>> mesh = ParseIntList("mesh", flags->Get("mesh"));
  if (!mesh.ok()) return Fail(mesh.status().message(), kExitBadInput);
  c.mesh = *mesh;
  absl::StatusOr<std::vector<int64_t>> shape = ParseIntList("shape", flags->Get("shape"));
  if (!shape.ok()) return Fail(shape.status().message(), kExitBadInput);
  c.shape = *shape;
  absl::StatusOr<DType> dtype = ParseDType(flags->Get("dtype", "f32"));
  if (!dtype.ok()) return Fail(absl::StrCat("--dtype: ", dtype.status().message()), kExitBadInput);
  c.dtype = *dtype;
  c.src = flags->Get("src");
  c.dst = flags->Get("dst");
  const std::string algorithm_name = flags->Get("algorithm", "auto");
  std::optional<Algorithm> algorithm = ParseAlgorithm(algorithm_name);
  if (!algorithm) {
    return Fail(absl::StrCat("--algorithm: unknown planner \"", algorithm_name,
                             "\" (known: auto, graph, greedy)"),
                kExitBadInput);
  }
  c.algorithm = *algorithm;
  c.data_seed = static_cast<uint64_t>(*seed);

  if (flags->Has("rank")) {  // hidden: a child of --processes
    absl::StatusOr<int64_t> rank = ParseInt("rank", flags->Get("rank"));
    if (!rank.ok()) return Fail(rank.status().message(), kExitBadInput);
    if (!flags->Has("store-dir")) return Fail("--rank needs --store-dir", kExitBadInput);
    return RunChildRank(c, *rank, flags->Get("store-dir"), options, fault);
  }
  if (absl::StatusOr<PreparedCase> p = Prepare(c); !p.ok() && !IsSkip(p.status())) {
    return Fail(p.status().message(), kExitBadInput);
  }
  const CaseReport r = flags->Has("processes") ? VerifyInProcesses(c, options, fault)
                                               : VerifyOnThreads(c, options, fault);
  switch (r.outcome) {
    case Outcome::kPassed:
      std::cout << "1 passed, 0 failed\n";
      return kExitOk;
    case Outcome::kSkipped:
      std::cout << "skipped: " << r.detail << "\n0 passed, 0 failed\n";
      return kExitNoPlan;
    case Outcome::kFailed:
      std::cout << "FAIL " << c.CommandLine() << mode_flags << "\n    " << r.detail
                << "\n0 passed, 1 failed\n";
      return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace reshard
