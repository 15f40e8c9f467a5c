#include "harness/measured_tables.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace reshard {
namespace {

// One (kind, n): per bytes, every group's samples; and the groups' names.
struct Pending {
  StepKind kind;
  int64_t n;
  std::vector<std::string> groups;
  std::map<double, std::vector<TimedCollective>> by_bytes;
};

MeasuredTable Finish(const Pending& p, const LinkProfile& machine) {
  MeasuredTable t;
  t.kind = p.kind;
  t.n = p.n;
  for (const std::string& g : p.groups) t.group += (t.group.empty() ? "" : "+") + g;
  std::vector<TimedCollective> all;
  for (const auto& [bytes, timed] : p.by_bytes) {
    std::vector<double> medians;
    MeasuredSample s{bytes, 0, timed[0].min_us, timed[0].max_us};
    for (const TimedCollective& c : timed) {
      medians.push_back(c.time_us);
      s.min_us = std::min(s.min_us, c.min_us);
      s.max_us = std::max(s.max_us, c.max_us);
      all.push_back(c);
    }
    s.us = Median(medians);
    t.samples.push_back(s);
  }
  absl::StatusOr<LinkProfile> fit = FitLink(all);
  t.fit = fit.ok() ? *fit : machine;
  return t;
}

}  // namespace

std::vector<MeasuredTable> BuildTables(const std::vector<Probe>& probes,
                                       const std::vector<TimedCollective>& samples,
                                       const LinkProfile& machine) {
  std::vector<Pending> pending;
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& probe = probes[i];
    auto it = std::find_if(pending.begin(), pending.end(), [&](const Pending& p) {
      return p.kind == probe.kind && p.n == probe.n;
    });
    if (it == pending.end())
      it = pending.insert(pending.end(), Pending{probe.kind, probe.n, {}, {}});
    const std::string group = probe.group.ToString();
    if (std::find(it->groups.begin(), it->groups.end(), group) == it->groups.end()) {
      it->groups.push_back(group);
    }
    it->by_bytes[probe.bytes].push_back(samples[i]);
  }
  std::vector<MeasuredTable> tables;
  for (const Pending& p : pending) {
    if (p.by_bytes.size() >= 2) tables.push_back(Finish(p, machine));
  }
  return tables;
}

}  // namespace reshard
