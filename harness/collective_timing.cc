#include "harness/collective_timing.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/status_macros.h"
#include "harness/mesh_barrier.h"

namespace reshard {
namespace {

constexpr StepKind kTimedKinds[] = {StepKind::kAllGather, StepKind::kReduceScatter,
                                    StepKind::kAllReduce, StepKind::kAllToAll,
                                    StepKind::kPermute,   StepKind::kExchange};

// Every set of mesh dims whose dims all have more than one rank: single
// dims first, then larger sets, each in ascending bit order.
std::vector<MeshDimSet> Groups(const DeviceMesh& mesh) {
  std::vector<MeshDimSet> groups;
  for (int size = 1; size <= mesh.ndim(); ++size) {
    for (unsigned bits = 1; bits < (1u << mesh.ndim()); ++bits) {
      const MeshDimSet g = MeshDimSet::FromBits(static_cast<uint8_t>(bits));
      bool all_split = g.size() == size;
      for (int m : g.ToVector()) all_split = all_split && mesh.size(m) > 1;
      if (all_split) groups.push_back(g);
    }
  }
  return groups;
}

// The exchange step as the executor runs a permute (grouped AllToAllV,
// planner/permute_exchange.h) in its simplest form: every member sends its
// whole block to the next member of the group and receives the previous one's.
absl::Status Shift(Communicator& comm, const Probe& p, std::vector<float>& a,
                   std::vector<float>& b) {
  const int64_t me = comm.mesh().IndexInGroup(p.group, comm.rank());
  std::vector<int64_t> send(p.n, 0), recv(p.n, 0);
  send[(me + 1) % p.n] = p.count;
  recv[(me + p.n - 1) % p.n] = p.count;
  return comm.AllToAllV(p.group, a.data(), send, b.data(), recv, DType::kF32);
}

// The exchange that gathers (S -> R as one step, issue 43): every member
// sends its block to each other member, as the executor runs it
// (collectives/permute_step.cc): pack a copy per peer, one AllToAllV, then
// the received blocks and its own copied into the target. On a few cores the
// copies of every rank contend, which is why this is timed, not derived.
absl::Status GatherExchange(Communicator& comm, const Probe& p, std::vector<float>& a,
                            std::vector<float>& b, std::vector<float>& target) {
  const int64_t me = comm.mesh().IndexInGroup(p.group, comm.rank());
  const size_t block = static_cast<size_t>(p.count) * sizeof(float);
  std::vector<int64_t> counts(p.n, p.count);
  counts[me] = 0;
  for (int64_t j = 0; j + 1 < p.n; ++j) std::memcpy(a.data() + j * p.count, target.data(), block);
  RESHARD_RETURN_IF_ERROR(comm.AllToAllV(p.group, a.data(), counts, b.data(), counts, DType::kF32));
  std::memmove(target.data() + me * p.count, target.data(), block);
  for (int64_t j = 0, k = 0; j < p.n; ++j) {
    if (j != me) std::memcpy(target.data() + j * p.count, b.data() + (k++) * p.count, block);
  }
  return absl::OkStatus();
}

absl::Status Run(Communicator& comm, const Probe& p, std::vector<float>& a, std::vector<float>& b,
                 std::vector<float>& c) {
  switch (p.kind) {
    case StepKind::kAllGather:
      return comm.AllGather(p.group, a.data(), b.data(), p.count, DType::kF32);
    case StepKind::kReduceScatter:
      return comm.ReduceScatter(p.group, a.data(), b.data(), p.count, DType::kF32, ReduceOp::kSum);
    case StepKind::kAllReduce:
      return comm.AllReduce(p.group, a.data(), p.count, DType::kF32, ReduceOp::kSum);
    case StepKind::kAllToAll:
      return comm.AllToAll(p.group, a.data(), b.data(), p.count, DType::kF32);
    case StepKind::kPermute:
      return Shift(comm, p, a, b);
    case StepKind::kExchange:
      return GatherExchange(comm, p, a, b, c);
    default:
      return absl::InternalError("calibrate: not a timed collective");
  }
}

}  // namespace

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

std::vector<Probe> MakeProbes(const DeviceMesh& mesh, const std::vector<int64_t>& sizes) {
  std::vector<Probe> probes;
  for (MeshDimSet group : Groups(mesh)) {
    const int64_t n = mesh.GroupSize(group);
    // Every kind at one size before the next size: kinds that compete for a
    // step are timed seconds apart, not minutes, so load drift shifts them alike.
    for (int64_t size : sizes) {
      for (StepKind kind : kTimedKinds) {
        // §6.2's bytes are n chunks of `count` but for all_reduce and permute
        // (one local block) and the gather exchange (its n - 1 sent blocks, the
        // busiest member's bytes as an exchange is priced: ExchangeUs).
        const int64_t chunks = kind == StepKind::kAllReduce || kind == StepKind::kPermute ? 1
                               : kind == StepKind::kExchange                              ? n - 1
                                                                                          : n;
        const int64_t count = std::max<int64_t>(1, size / 4 / chunks);
        probes.push_back({kind, group, n, count, static_cast<double>(count * 4 * chunks)});
      }
    }
  }
  return probes;
}

namespace {

// The f32 elements each of a probe's buffers must hold: all_reduce and the
// permute's shift move one block of `count`, the others n blocks.
int64_t BufferElements(const Probe& p) {
  return p.kind == StepKind::kAllReduce || p.kind == StepKind::kPermute ? p.count : p.n * p.count;
}

int64_t MostBufferElements(const std::vector<Probe>& probes) {
  int64_t elements = 1;
  for (const Probe& p : probes) elements = std::max(elements, BufferElements(p));
  return elements;
}

}  // namespace

int64_t ProbeBufferBytes(const std::vector<Probe>& probes) {
  return 3 * 4 * MostBufferElements(probes);
}

absl::StatusOr<std::vector<double>> TimeProbes(Communicator& comm, const std::vector<Probe>& probes,
                                               int64_t repeat,
                                               const std::function<void(size_t done)>& timed) {
  const int64_t elements = MostBufferElements(probes);
  std::vector<float> a(elements, 1.0f), b(elements, 0.0f), c(elements, 2.0f);
  std::vector<double> times;
  times.reserve(probes.size() * repeat);
  for (const Probe& p : probes) {
    RESHARD_RETURN_IF_ERROR(Run(comm, p, a, b, c));  // warm-up (and connects a new group)
    for (int64_t r = 0; r < repeat; ++r) {
      RESHARD_RETURN_IF_ERROR(MeshBarrier(comm));
      const auto start = std::chrono::steady_clock::now();
      RESHARD_RETURN_IF_ERROR(Run(comm, p, a, b, c));
      times.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    if (timed) timed(times.size() / repeat);
  }
  return times;
}

std::vector<TimedCollective> CombineRanks(const std::vector<Probe>& probes,
                                          const std::vector<std::vector<double>>& times_by_rank,
                                          int64_t repeat) {
  std::vector<TimedCollective> out;
  for (size_t p = 0; p < probes.size(); ++p) {
    std::vector<double> slowest(repeat, 0.0);
    for (const std::vector<double>& times : times_by_rank) {
      for (int64_t r = 0; r < repeat; ++r) {
        slowest[r] = std::max(slowest[r], times[p * repeat + r]);
      }
    }
    out.push_back({probes[p].kind, probes[p].n, probes[p].bytes, Median(slowest),
                   *std::min_element(slowest.begin(), slowest.end()),
                   *std::max_element(slowest.begin(), slowest.end())});
  }
  return out;
}

double MeasureCopyGbps(int64_t bytes, int64_t repeat) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  std::memcpy(to.data(), from.data(), bytes);  // fault the pages in first
  std::vector<double> us;
  for (int64_t r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    volatile char sink = to[bytes - 1];  // the copy is used: not optimised away
    (void)sink;
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  // bytes per microsecond = 1e-3 GB/s
  return static_cast<double>(bytes) / std::max(Median(us), 1e-3) / 1e3;
}

}  // namespace reshard
