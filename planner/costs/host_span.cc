#include "planner/costs/host_span.h"

#include <vector>

namespace reshard {

namespace {

// Rank 0's group members, row-major offsets, in increasing order (each
// mesh dim's block of copies lies above everything before it); only those
// below `limit` (the offsets only grow, so pruning keeps every member below
// it).
std::vector<int64_t> MembersBelow(const DeviceMesh& mesh, MeshDimSet group, int64_t limit) {
  std::vector<int64_t> ranks = {0};
  int64_t stride = 1;
  for (int m = mesh.ndim() - 1; m >= 0; --m) {
    if (group.Contains(m)) {
      const size_t before = ranks.size();
      for (int64_t i = 1; i < mesh.size(m) && i * stride < limit; ++i) {
        for (size_t j = 0; j < before; ++j) {
          if (ranks[j] + i * stride < limit) ranks.push_back(ranks[j] + i * stride);
        }
      }
    }
    stride *= mesh.size(m);
  }
  return ranks;
}

// The hosts of ascending ranks: theirs ascend too, so each new one starts a
// run.
int64_t HostsOfAscending(absl::Span<const int64_t> ranks, int64_t devices_per_host) {
  int64_t hosts = 0;
  int64_t last = -1;
  for (int64_t r : ranks) {
    hosts += r / devices_per_host != last;
    last = r / devices_per_host;
  }
  return hosts;
}

// The hosts rank 0's group spans, as HostsOfAscending of its members
// (MembersBelow), without listing them: along the group's last mesh dim
// (the least stride, `step`) its n members from each `base` are a run whose
// hosts are counted at once: n of them when step >= devices_per_host, else
// every host from base's to its last member's. Each base lies above the
// previous run, so a run shares at most its first host with the one before.
int64_t HostsOfGroup(const DeviceMesh& mesh, MeshDimSet group, int64_t devices_per_host) {
  int64_t stride[kMaxMeshDims];
  int64_t s = 1;
  for (int m = mesh.ndim() - 1; m >= 0; --m) {
    stride[m] = s;
    s *= mesh.size(m);
  }
  int dims[kMaxMeshDims];
  int k = 0;
  for (int m = 0; m < mesh.ndim(); ++m) {
    if (group.Contains(m)) dims[k++] = m;
  }
  if (k == 0) return 1;
  const int64_t n = mesh.size(dims[k - 1]);
  const int64_t step = stride[dims[k - 1]];
  int64_t index[kMaxMeshDims] = {};  // an odometer over dims[0, k - 1)
  int64_t hosts = 0;
  int64_t previous = -1;  // the last host of the run before
  for (;;) {
    int64_t base = 0;
    for (int i = 0; i + 1 < k; ++i) base += index[i] * stride[dims[i]];
    const int64_t first = base / devices_per_host;
    const int64_t last = (base + (n - 1) * step) / devices_per_host;
    hosts += (step >= devices_per_host ? n : last - first + 1) - (first == previous ? 1 : 0);
    previous = last;
    int i = k - 2;
    while (i >= 0 && ++index[i] == mesh.size(dims[i])) index[i--] = 0;
    if (i < 0) return hosts;
  }
}

}  // namespace

HostSpan HostSpanOf(const DeviceMesh& mesh, MeshDimSet group, int64_t devices_per_host) {
  HostSpan span;
  span.ranks = mesh.GroupSize(group);
  span.local = static_cast<int64_t>(MembersBelow(mesh, group, devices_per_host).size());
  if (span.ranks <= (int64_t{1} << 16)) {
    span.nodes = HostsOfGroup(mesh, group, devices_per_host);
  } else {
    // Huge groups: as many hosts as rank 0's share fills (exact when hosts
    // hold whole blocks of the group, as on meshes whose trailing dims make
    // a host).
    span.nodes = (span.ranks + span.local - 1) / span.local;
  }
  return span;
}

HostSpan HostSpanOfRanks(absl::Span<const int64_t> ranks, int64_t devices_per_host) {
  HostSpan span;
  span.ranks = static_cast<int64_t>(ranks.size());
  if (ranks.empty()) return span;
  span.local = 0;
  for (int64_t r : ranks) span.local += r / devices_per_host == ranks[0] / devices_per_host;
  span.nodes = HostsOfAscending(ranks, devices_per_host);
  return span;
}

}  // namespace reshard
