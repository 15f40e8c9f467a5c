// reshard calibrate: times the collectives on Gloo (ranks as threads, or as
// processes with --processes), fits the alpha-beta model's alpha and beta
// (cli/alpha_beta_fit.h, spec §6.2) and writes a profile file
// (cli/profile_json.h). One machine has one kind of link, so the profile's
// intra_host and inter_host are the same fit.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
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
#include "base/status_macros.h"
#include "base/utf8.h"
#include "cli/alpha_beta_fit.h"
#include "cli/collective_timing.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/profile_json.h"
#include "collectives/gloo/gloo_communicator.h"
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

absl::StatusOr<int64_t> BoundedFlag(const FlagValues& flags, absl::string_view name,
                                    absl::string_view fallback, int64_t lo, int64_t hi) {
  RESHARD_ASSIGN_OR_RETURN(int64_t v, ParseInt(name, flags.Get(name, fallback)));
  if (v < lo || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": ", v, " is out of range; must be between ", lo, " and ", hi));
  }
  return v;
}

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
  return sizes;
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
  if (!mesh.ok()) return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
  s.mesh = *mesh;
  RESHARD_ASSIGN_OR_RETURN(int64_t max_ranks, BoundedFlag(flags, "max-ranks", "16", 1, 4096));
  if (s.mesh.num_ranks() > max_ranks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mesh: ", s.mesh.ToString(), " has ", s.mesh.num_ranks(), " ranks, more than --max-ranks ",
        max_ranks, " (each rank is a thread or process; raise --max-ranks)"));
  }
  if (s.mesh.num_ranks() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mesh: ", s.mesh.ToString(), " has one rank; nothing to time"));
  }
  RESHARD_ASSIGN_OR_RETURN(s.sizes, ParseSizes(flags.Get("sizes", "4K,16K,64K,256K,1M,4M")));
  RESHARD_ASSIGN_OR_RETURN(s.repeat, BoundedFlag(flags, "repeat", "9", 1, 1000));
  RESHARD_ASSIGN_OR_RETURN(int64_t timeout, BoundedFlag(flags, "timeout", "60", 1, 86400));
  s.gloo.timeout = absl::Seconds(timeout);
  s.processes = flags.Has("processes");
  s.out = flags.Get("out");
  s.name = flags.Get("name", "gloo-loopback");
  return s;
}

// Fails early, before minutes of timing, when --out cannot be written; leaves
// no file behind that was not there.
absl::Status CheckWritable(const std::string& path) {
  const bool existed = std::filesystem::exists(path);
  std::ofstream probe(path, std::ios::app);
  if (!probe) {
    return absl::PermissionDeniedError(
        absl::StrCat("--out: cannot write ", path, ": ", std::strerror(errno)));
  }
  probe.close();
  if (!existed) std::filesystem::remove(path);
  return absl::OkStatus();
}

// One rank's part: its times for every probe, as text (one per line).
RankFunction TimingRank(const CalibrateSettings& s, const std::vector<Probe>& probes) {
  return [&s, &probes](Rank& rank) -> absl::StatusOr<std::string> {
    RESHARD_ASSIGN_OR_RETURN(std::vector<double> times, TimeProbes(rank.comm, probes, s.repeat));
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
  launch.child_args = {"reshard", "calibrate", "--mesh", absl::StrJoin(s.mesh.sizes(), ","),
                       "--sizes", absl::StrJoin(s.sizes, ","), "--repeat",
                       absl::StrCat(s.repeat), "--max-ranks", absl::StrCat(s.mesh.num_ranks()),
                       "--timeout", absl::StrCat(absl::ToInt64Seconds(s.gloo.timeout))};
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

// The samples of `probes` on `group` (and of `kind`, unless null).
std::vector<TimedCollective> Subset(const std::vector<Probe>& probes,
                                    const std::vector<TimedCollective>& samples, MeshDimSet group,
                                    const StepKind* kind) {
  std::vector<TimedCollective> out;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (probes[i].group == group && (kind == nullptr || probes[i].kind == *kind)) {
      out.push_back(samples[i]);
    }
  }
  return out;
}

// Prints measured against modeled time per kind and group, with each block's
// RMS relative error; returns the samples as JSON for the "fit" section.
json PrintSamples(const std::vector<Probe>& probes, const std::vector<TimedCollective>& samples,
                  const LinkProfile& link) {
  std::cout << absl::StrFormat("%-15s %-8s %4s %10s %13s %13s %8s\n", "kind", "group", "n",
                               "bytes", "measured_us", "modeled_us", "error");
  json rows = json::array();
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    const double modeled = ModeledTimeUs(samples[i], link);
    const std::string kind(StepKindName(p.kind));
    std::cout << absl::StrFormat("%-15s %-8s %4d %10.0f %13.1f %13.1f %+7.1f%%\n", kind,
                                 p.group.ToString(), p.n, p.bytes, samples[i].time_us, modeled,
                                 100 * (modeled - samples[i].time_us) / samples[i].time_us);
    rows.push_back({{"kind", kind}, {"group", p.group.ToString()}, {"n", p.n},
                    {"bytes", p.bytes}, {"measured_us", samples[i].time_us},
                    {"modeled_us", modeled}});
    if (i + 1 == probes.size() || probes[i + 1].kind != p.kind || probes[i + 1].group != p.group) {
      const double rms = RmsRelativeError(Subset(probes, samples, p.group, &p.kind), link);
      std::cout << absl::StrFormat("  %s on %s: RMS relative error %.1f%%\n", kind,
                                   p.group.ToString(), 100 * rms);
    }
  }
  return rows;
}

// A fit of each group's samples alone, printed; as JSON.
json FitEachGroup(const std::vector<Probe>& probes,
                                  const std::vector<TimedCollective>& samples) {
  json groups = json::array();
  for (size_t i = 0; i < probes.size(); ++i) {
    if (i > 0 && probes[i - 1].group == probes[i].group) continue;
    const std::vector<TimedCollective> mine = Subset(probes, samples, probes[i].group, nullptr);
    absl::StatusOr<LinkProfile> fit = FitLink(mine);
    if (!fit.ok()) {
      // One group's few samples may not fit; the machine fit below uses all.
      std::cout << absl::StrFormat("group %-8s n=%-3d no fit: %s\n", probes[i].group.ToString(),
                                   probes[i].n, fit.status().message());
      groups.push_back({{"group", probes[i].group.ToString()}, {"n", probes[i].n},
                        {"error", std::string(fit.status().message())}});
      continue;
    }
    const LinkProfile link = *fit;
    const double rms = RmsRelativeError(mine, link);
    std::cout << absl::StrFormat("group %-8s n=%-3d alpha %8.2f us  beta %7.3f GB/s  RMS error %5.1f%%\n",
                                 probes[i].group.ToString(), probes[i].n, link.alpha_us,
                                 link.beta_gbps, 100 * rms);
    groups.push_back({{"group", probes[i].group.ToString()}, {"n", probes[i].n},
                      {"alpha_us", link.alpha_us}, {"beta_gbps", link.beta_gbps},
                      {"rms_relative_error", rms}});
  }
  return groups;
}

// Fits, prints, and returns the profile with its "fit" section.
absl::StatusOr<json> FitProfile(const CalibrateSettings& s, const std::vector<Probe>& probes,
                                const std::vector<TimedCollective>& samples, double memory_gbps) {
  RESHARD_ASSIGN_OR_RETURN(LinkProfile link, FitLink(samples));
  const double rms = RmsRelativeError(samples, link);
  json rows = PrintSamples(probes, samples, link);
  std::cout << "\nper-group fits:\n";
  json groups = FitEachGroup(probes, samples);
  std::cout << absl::StrFormat(
      "\nmachine fit (every group): alpha %.2f us, beta %.3f GB/s, RMS relative error %.1f%%\n"
      "memory bandwidth (memcpy): %.2f GB/s\n",
      link.alpha_us, link.beta_gbps, 100 * rms, memory_gbps);
  CostProfile profile{s.name, link, link, memory_gbps};
  RESHARD_RETURN_IF_ERROR(ValidateCostProfile(profile));
  json out = ProfileToJson(profile);
  out["fit"] = {
      {"tool", "reshard calibrate"},
      {"backend", "gloo (TCP on loopback)"},
      {"ranks", s.processes ? "processes" : "threads"},
      {"mesh", s.mesh.sizes()},
      {"sizes_bytes", s.sizes},
      {"repeat", s.repeat},
      {"method", "least squares on the relative error of spec 6.2's formulas; each sample is "
                 "the median over repeats of the slowest rank's time"},
      {"note", "measured on one machine: intra_host and inter_host are the same fit"},
      {"rms_relative_error", rms},
      {"groups", groups},
      {"samples", rows}};
  return out;
}

CommandResult Calibrate(const CalibrateSettings& s) {
  const std::vector<Probe> probes = MakeProbes(s.mesh, s.sizes);
  std::cout << absl::StrFormat(
      "reshard calibrate: mesh %s, Gloo on %s, ranks as %s, %d sizes x %d repeats\n\n",
      s.mesh.ToString(), s.gloo.hostname, s.processes ? "processes" : "threads", s.sizes.size(),
      s.repeat);
  absl::StatusOr<std::vector<std::vector<double>>> times =
      Measure(s, probes);
  if (!times.ok()) return Fail(times.status().ToString(), kExitInternal);
  const std::vector<TimedCollective> samples = CombineRanks(probes, *times, s.repeat);
  const int64_t largest = *std::max_element(s.sizes.begin(), s.sizes.end());
  const double memory_gbps = MeasureCopyGbps(std::max<int64_t>(largest, 1 << 20), s.repeat);
  absl::StatusOr<json> profile = FitProfile(s, probes, samples, memory_gbps);
  if (!profile.ok()) return Fail(profile.status().message(), kExitInternal);
  if (absl::Status w = WriteProfileFile(s.out, *profile); !w.ok()) {
    return Fail(w.message(), kExitInternal);
  }
  std::cout << "wrote " << s.out << "\n";
  return kExitOk;
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
  if (absl::Status w = CheckWritable(s->out); !w.ok()) return Fail(w.message(), kExitInternal);
  return Calibrate(*s);
}

// reshard calibrate --help before FLAGS.
constexpr char kAbout[] = R"txt(reshard calibrate: measure this machine's alpha-beta cost profile.

Times all_gather, reduce_scatter, all_reduce and all_to_all on the Gloo
backend (TCP on loopback) for each mesh dim and each group of several mesh
dims of --mesh, at several message sizes; takes the median of --repeat runs
(each the slowest rank's time); fits the latency alpha and bandwidth beta of
spec §6.2's formulas by least squares on the relative error; prints measured
against modeled times with the fit's RMS relative error; and writes a profile
that --profile reads (reshard plan --cost-model alpha-beta --profile FILE).

USAGE
  reshard calibrate --mesh 2,4 --out profile.json
  reshard calibrate --mesh 2,2 --sizes 4K,64K,1M --repeat 3 --processes --out p.json

)txt";

}  // namespace

Command CalibrateCommand() {
  return {
      "calibrate",
      "time the collectives on this machine and write an alpha-beta cost profile "
      "(--profile FILE; spec §6.2)",
      kAbout,
      {
          {"mesh", "SIZES", "required; the mesh whose groups are timed, e.g. 2,4"},
          {"out", "FILE", "required; the profile to write (JSON, see README)"},
          {"sizes", "LIST",
           "4K,16K,64K,256K,1M,4M; message sizes in bytes (K, M suffixes), as spec §6.2 "
           "counts them per collective"},
          {"repeat", "N", "9; timed runs per kind, group and size (after a warm-up)"},
          {"processes", "",
           "one process per rank (a file store in a temporary directory) instead of one "
           "thread per rank"},
          {"max-ranks", "N", "16; refuse a larger mesh (each rank is a thread or process)"},
          {"name", "NAME", "gloo-loopback; the profile's name"},
          {"timeout", "SECONDS", "60; how long a rank waits for its peers"},
          // A child rank of --processes (harness/run_ranks.h).
          {"rank", "R", "", /*hidden=*/true},
          {"store-dir", "DIR", "", /*hidden=*/true},
          {"job", "NAME", "", /*hidden=*/true},
      },
      R"txt(The profile's "fit" section records how it was measured: the mesh, sizes,
per-group fits and every sample. Ranks share this machine's cores, so the
numbers describe Gloo on this machine under its current load, not a network.

EXIT CODES
  0  the profile was written
  1  timing, fitting or writing the profile failed
  2  bad flags
)txt",
      "reshard calibrate",
      RunCalibrate};
}

}  // namespace reshard
