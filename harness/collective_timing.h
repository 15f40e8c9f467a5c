// What `reshard calibrate` times: every collective kind on every group of a
// mesh (each mesh dim, and each set of several mesh dims) at several message
// sizes, on one rank's Communicator, and how the ranks' timings combine.
#ifndef RESHARD_HARNESS_COLLECTIVE_TIMING_H_
#define RESHARD_HARNESS_COLLECTIVE_TIMING_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "harness/alpha_beta_fit.h"
#include "mesh/device_mesh.h"
#include "mesh/mesh_dim_set.h"

namespace reshard {

// One collective to time: `count` f32 elements per member as the
// Communicator counts them (communicator.h), `bytes` as spec §6.2 counts
// them for the kind.
struct Probe {
  StepKind kind = StepKind::kAllGather;
  MeshDimSet group;
  int64_t n = 2;
  int64_t count = 1;
  double bytes = 0;
};

// all_gather, reduce_scatter, all_reduce, all_to_all, the permute exchange
// (AllToAllV, each member's block to the next member) and the gather exchange
// (each member's block to every other member, packed and placed as the
// executor does; bytes: the n - 1 blocks a member sends) on each group
// of more than one rank (groups with a size-1 mesh dim repeat a smaller one and
// are left out) at each size in `sizes` (§6.2 bytes, rounded down to whole
// elements per member, at least one); per group, every kind at one size
// before the next size.
std::vector<Probe> MakeProbes(const DeviceMesh& mesh, const std::vector<int64_t>& sizes);

// The bytes one rank's buffers hold while timing `probes` (TimeProbes
// allocates three of the largest any probe needs).
int64_t ProbeBufferBytes(const std::vector<Probe>& probes);

// This rank's part: each probe once to warm up, then `repeat` times, each
// after a barrier over the whole mesh. Microseconds, probe-major
// (times[p * repeat + r]). Collective: every rank must call it alike.
// `timed`, when given, is called after each probe with how many are done.
absl::StatusOr<std::vector<double>> TimeProbes(
    Communicator& comm, const std::vector<Probe>& probes, int64_t repeat,
    const std::function<void(size_t done)>& timed = nullptr);

// Per probe: the median over repeats of the slowest rank's time (a
// collective is done when its last member is), and its min and max. times_by_rank[rank] as
// TimeProbes returns.
std::vector<TimedCollective> CombineRanks(const std::vector<Probe>& probes,
                                          const std::vector<std::vector<double>>& times_by_rank,
                                          int64_t repeat);

// The median of `v` (the mean of the middle two for an even count); v non-empty.
double Median(std::vector<double> v);

// Memory bandwidth for local copies: the median of `repeat` memcpys of
// `bytes`, GB/s.
double MeasureCopyGbps(int64_t bytes, int64_t repeat);

}  // namespace reshard

#endif  // RESHARD_HARNESS_COLLECTIVE_TIMING_H_
