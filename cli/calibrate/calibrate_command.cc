// reshard calibrate: times the collectives on Gloo (ranks as threads, or as
// processes with --processes; harness/run_ranks.h) and writes a version 2
// profile (cli/calibrate/calibration_report.h: the measured model's tables, spec §6.3,
// and the alpha-beta fit, spec §6.2).

#include <algorithm>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/output_file.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/backend_command_summaries.h"
#include "cli/calibrate/calibration_report.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/request_flags.h"
#include "collectives/gloo/gloo_communicator.h"
#include "formats/profile_json.h"
#include "harness/alpha_beta_fit.h"
#include "harness/collective_timing.h"
#include "harness/host_memory.h"
#include "harness/run_ranks.h"

namespace reshard {
namespace {

using json = nlohmann::json;

struct CalibrateSettings {
  DeviceMesh mesh;
  std::vector<int64_t> sizes;
  int64_t repeat = 9;
  bool processes = false;
  std::string out;
  std::string name;
  GlooOptions gloo;
};

absl::StatusOr<std::vector<int64_t>> ParseSizes(const std::string& text) {
  std::vector<int64_t> sizes;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    RESHARD_ASSIGN_OR_RETURN(int64_t size, ParseByteSize("sizes", item));
    if (size < 4 || size > (int64_t{256} << 20)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--sizes: ", size, " bytes is out of range; each size must be between 4 and 256M"));
    }
    sizes.push_back(size);
  }
  // Checked before timing: the fit needs two sizes (a bandwidth is a slope).
  if (std::set<int64_t>(sizes.begin(), sizes.end()).size() < 2) {
    return absl::InvalidArgumentError(
        "--sizes: give at least two different sizes (the fit is a line through them), e.g. "
        "4K,4M");
  }
  return sizes;
}

// 4 KiB to 64 MiB in steps of 4x (spec §6.3).
constexpr char kDefaultSizes[] = "4K,16K,64K,256K,1M,4M,16M,64M";

// Checked before minutes of timing (issue 20): the name goes into the JSON
// profile, which must be valid UTF-8, and into plans' fingerprints.
absl::Status CheckName(const std::string& name) {
  if (name.empty() || !IsValidUtf8(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name: \"", Abbreviate(name, 64), "\" must be non-empty valid UTF-8"));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--name: \"", Abbreviate(name, 64), "\" has a control character; use a printable name"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CalibrateSettings> ParseSettings(const FlagValues& flags) {
  // A child rank of --processes (hidden --rank) reports to --store-dir instead of --out.
  const bool child = flags.Has("rank");
  for (const char* required : {"mesh", child ? "store-dir" : "out"}) {
    if (!flags.Has(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", required, " is required (see reshard calibrate --help)"));
    }
  }
  CalibrateSettings s;
  RESHARD_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseIntList("mesh", flags.Get("mesh")));
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Create(sizes);
  if (!mesh.ok())
    return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
  s.mesh = *mesh;
  RESHARD_ASSIGN_OR_RETURN(int64_t max_ranks, IntFlagIn(flags, "max-ranks", 16, 1, 4096));
  if (s.mesh.num_ranks() > max_ranks) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mesh: ", s.mesh.ToString(), " has ", s.mesh.num_ranks(),
                     " ranks, more than --max-ranks ", max_ranks,
                     " (each rank is a thread or process; raise --max-ranks)"));
  }
  if (s.mesh.num_ranks() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mesh: ", s.mesh.ToString(), " has one rank; nothing to time"));
  }
  RESHARD_ASSIGN_OR_RETURN(s.sizes, ParseSizes(flags.Get("sizes", kDefaultSizes)));
  RESHARD_ASSIGN_OR_RETURN(s.repeat, IntFlagIn(flags, "repeat", 5, 1, 1000));
  RESHARD_ASSIGN_OR_RETURN(int64_t timeout, IntFlagIn(flags, "timeout", 60, 1, 86400));
  s.gloo.timeout = absl::Seconds(timeout);
  s.processes = flags.Has("processes");
  s.out = flags.Get("out");
  s.name = flags.Get("name", "gloo-loopback");
  RESHARD_RETURN_IF_ERROR(CheckName(s.name));
  return s;
}

// Rank 0's progress on stderr, at most once a second (a child process's
// stderr goes to its log, so only ranks as threads show it).
std::function<void(size_t)> Progress(int64_t rank, size_t total) {
  if (rank != 0) return nullptr;
  return [total, last = absl::Now()](size_t done) mutable {
    if (absl::Now() - last < absl::Seconds(1) && done < total) return;
    last = absl::Now();
    std::cerr << absl::StrFormat("calibrate: %d/%d collectives timed\n", done, total);
  };
}

// One rank's part: its times for every probe, as text (one per line).
RankFunction TimingRank(const CalibrateSettings& s, const std::vector<Probe>& probes) {
  return [&s, &probes](Rank& rank) -> absl::StatusOr<std::string> {
    RESHARD_ASSIGN_OR_RETURN(
        std::vector<double> times,
        TimeProbes(rank.comm, probes, s.repeat, Progress(rank.comm.rank(), probes.size())));
    std::string out;
    for (double t : times) absl::StrAppend(&out, absl::StrFormat("%.17g\n", t));
    return out;
  };
}

// Where the ranks run: threads, or with --processes this binary started
// again per rank (hidden --rank, --store-dir, --job).
LaunchOptions Launch(const CalibrateSettings& s) {
  LaunchOptions launch;
  launch.on = s.processes ? RanksOn::kProcesses : RanksOn::kThreads;
  launch.gloo = s.gloo;
  launch.child_args = {"reshard",     "calibrate",
                       "--mesh",      absl::StrJoin(s.mesh.sizes(), ","),
                       "--sizes",     absl::StrJoin(s.sizes, ","),
                       "--repeat",    absl::StrCat(s.repeat),
                       "--max-ranks", absl::StrCat(s.mesh.num_ranks()),
                       "--timeout",   absl::StrCat(absl::ToInt64Seconds(s.gloo.timeout))};
  // Each collective is bounded by the timeout; allow for many of them.
  launch.wait = 4 * s.gloo.timeout + absl::Seconds(30);
  return launch;
}

// Every rank's times (times[rank][p * repeat + r]).
absl::StatusOr<std::vector<std::vector<double>>> Measure(const CalibrateSettings& s,
                                                         const std::vector<Probe>& probes) {
  const std::vector<absl::StatusOr<std::string>> outputs =
      RunRanks(s.mesh, Launch(s), TimingRank(s, probes));
  RESHARD_RETURN_IF_ERROR(FirstRankError(outputs));
  std::vector<std::vector<double>> times;
  for (size_t rank = 0; rank < outputs.size(); ++rank) {
    times.emplace_back();
    for (absl::string_view line : absl::StrSplit(*outputs[rank], '\n', absl::SkipEmpty())) {
      double t = 0;
      if (!absl::SimpleAtod(line, &t)) break;
      times.back().push_back(t);
    }
    if (times.back().size() != probes.size() * s.repeat) {
      return absl::InternalError(absl::StrCat("rank ", rank, " gave malformed timings"));
    }
  }
  return times;
}

CommandResult Calibrate(const CalibrateSettings& s) {
  const std::vector<Probe> probes = MakeProbes(s.mesh, s.sizes);
  std::cout << absl::StrFormat(
      "reshard calibrate: mesh %s, Gloo on %s, ranks as %s, %d sizes x %d repeats\n\n",
      s.mesh.ToString(), s.gloo.hostname, s.processes ? "processes" : "threads", s.sizes.size(),
      s.repeat);
  std::cerr << absl::StrFormat("calibrate: timing %d collectives, %d times each, on %d %s\n",
                               probes.size(), s.repeat, s.mesh.num_ranks(),
                               s.processes ? "processes" : "threads");
  absl::StatusOr<std::vector<std::vector<double>>> times = Measure(s, probes);
  if (!times.ok()) return Fail(times.status().ToString(), kExitInternal);
  const std::vector<TimedCollective> samples = CombineRanks(probes, *times, s.repeat);
  const int64_t largest = *std::max_element(s.sizes.begin(), s.sizes.end());
  const CalibrationRun run{s.name,
                           s.mesh.sizes(),
                           s.sizes,
                           s.repeat,
                           s.processes ? "processes" : "threads",
                           MeasureCopyGbps(std::max<int64_t>(largest, 1 << 20), s.repeat)};
  absl::StatusOr<json> profile = ReportCalibration(run, probes, samples, std::cout);
  if (!profile.ok()) return Fail(profile.status().message(), kExitInternal);
  if (absl::Status w = WriteProfileFile(s.out, *profile); !w.ok()) {
    return Fail(w.message(), kExitInternal);
  }
  std::cout << "wrote " << Utf8Valid(s.out) << " (profile version 2)\n";
  return kExitOk;
}

// Every rank's timing buffers (ProbeBufferBytes) must fit in the memory a
// job may take here (DefaultMaxHostMemory), or the kernel kills the run
// minutes in: mesh 2,8 at 64M used to ask for about 49 GB.
absl::Status CheckBufferMemory(const CalibrateSettings& s, const std::vector<Probe>& probes) {
  const double need =
      static_cast<double>(s.mesh.num_ranks()) * static_cast<double>(ProbeBufferBytes(probes));
  const double allowed = DefaultMaxHostMemory();
  if (need <= allowed) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--sizes: timing up to %d bytes on %d ranks (mesh %s) needs about %.1f GiB of buffers, "
      "more than the %.1f GiB allowed here (half this machine's memory or of ulimit -v); give "
      "smaller --sizes or a smaller --mesh",
      *std::max_element(s.sizes.begin(), s.sizes.end()), s.mesh.num_ranks(), s.mesh.ToString(),
      need / (1 << 30), allowed / (1 << 30)));
}

CommandResult RunCalibrate(const FlagValues& flags, const std::vector<std::string>&) {
  absl::StatusOr<CalibrateSettings> s = ParseSettings(flags);
  if (!s.ok()) return Fail(s.status().message(), kExitBadInput);
  if (flags.Has("rank")) {
    absl::StatusOr<int64_t> rank = ParseInt("rank", flags.Get("rank"));
    if (!rank.ok()) return Fail(rank.status().message(), kExitBadInput);
    const std::vector<Probe> probes = MakeProbes(s->mesh, s->sizes);
    return RunChildRank(s->mesh, ChildRank{*rank, flags.Get("store-dir"), flags.Get("job")},
                        Launch(*s), TimingRank(*s, probes));
  }
  // Before minutes of timing (base/output_file.h: a symlink's target, a
  // regular file or a new path, a directory that can hold it).
  if (absl::StatusOr<std::string> w = CheckOutputPath(s->out, "--out"); !w.ok()) {
    return Fail(w.status().message(), kExitBadInput);
  }
  if (absl::Status m = CheckBufferMemory(*s, MakeProbes(s->mesh, s->sizes)); !m.ok()) {
    return Fail(m.message(), kExitBadInput);
  }
  return Calibrate(*s);
}

// reshard calibrate --help before FLAGS.
constexpr char kAbout[] = R"txt(reshard calibrate: measure this machine's cost profile (version 2).

Times all_gather, reduce_scatter, all_reduce, all_to_all, the permute
exchange (AllToAllV, each member's block to the next) and the gather
exchange (each member's block to every other) on the Gloo backend
(TCP on loopback) for each mesh dim and each group of several mesh dims of
--mesh, at each of --sizes; per size takes the median, min and max over
--repeat runs (each the slowest rank's time). Writes a profile whose
measured model (reshard plan --cost-model measured --profile FILE, spec
§6.3) prices a step by interpolating these samples, log-log between sizes,
per kind and group size, and a fitted alpha-beta formula beyond them. Prints
every sample with its spread, each size predicted with that size held out
(the error the model makes between and beyond measured sizes), and the
machine-wide alpha-beta fit (spec §6.2; --cost-model alpha-beta reads it
from the same file) with its error for comparison.

USAGE
  reshard calibrate --mesh 2,4 --out profile.json
  reshard calibrate --mesh 2,2 --sizes 4K,64K,1M --repeat 3 --processes --out p.json
  reshard calibrate --mesh 2,4 --out ~/.config/reshard/gloo-profile.json
                     (where reshard bench finds it without --profile)

)txt";

}  // namespace

std::vector<FlagSpec> CalibrateFlags() {
  std::vector<FlagSpec> flags = {
      {"mesh", "SIZES", "required; the mesh whose groups are timed, e.g. 2,4"},
      {"out", "FILE",
       "required; the profile to write (JSON, see README): a new path or a regular "
       "file, replaced atomically (a temporary file, then a rename); a symlink's target "
       "is written, the link stays; anything else (a directory, FIFO or device) is "
       "refused before timing"},
      {"sizes", "LIST",
       "4K,16K,64K,256K,1M,4M,16M,64M; message sizes in bytes (K, M suffixes), as spec "
       "§6.2 counts them per kind"},
      {"repeat", "N", "5; timed runs per kind, group and size (after a warm-up)"},
      {"processes", "",
       "one process per rank (a file store in a temporary directory) instead of one "
       "thread per rank"},
      {"max-ranks", "N", "16; refuse a larger mesh (each rank is a thread or process)"},
      {"name", "NAME", "gloo-loopback; the profile's name (printable UTF-8)"},
      {"timeout", "SECONDS", "60; how long a rank waits for its peers"},
  };
  const std::vector<FlagSpec> child = ChildRankFlags();  // --processes
  flags.insert(flags.end(), child.begin(), child.end());
  return flags;
}

Command CalibrateCommand() {
  return {"calibrate",
          kCalibrateSummary,
          kAbout,
          CalibrateFlags(),
          R"txt(Flags, --name and --out are checked before anything is timed, and so is
the memory the ranks' timing buffers need (at most half this machine's
memory, or of ulimit -v). The profile's "fit" section records how it was
measured (mesh, sizes, repeats, held-out checks). Ranks share this
machine's cores, so the numbers describe Gloo on this machine under its
current load, not a network.

EXIT CODES
  0  the profile was written
  1  timing, fitting or writing the profile failed
  2  bad flags (nothing was timed or written)
)txt",
          "reshard calibrate",
          RunCalibrate};
}

}  // namespace reshard
