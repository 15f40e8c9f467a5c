// The text notation for DistStates (spec §3) and StridedShard decoding (§7).
//
//   S(0)[1]S(0)[0]R      tensor dim 0 split over mesh dim 1, then mesh dim 0
//   P(sum)S(1)           P alone means P(sum); "," or spaces may separate tokens
//   _S(0, 2)S(0)         StridedShard, input only: decoded into a shard order
#ifndef RESHARD_PLANNER_LAYOUT_NOTATION_H_
#define RESHARD_PLANNER_LAYOUT_NOTATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/device_mesh.h"
#include "planner/layout/dist_state.h"

namespace reshard {

struct ParsedState {
  DistState state;
  // True when the text used `_S(d, sf)`; such input always uses the graph
  // planner (spec §9).
  bool strided = false;
};

// Parses one state for a mesh and a tensor of `tensor_ndim` dims. Negative
// shard dims are normalised (S(-1) is the last dim). InvalidArgument, naming
// the offending token, on empty or malformed text, a token count that differs
// from the mesh's dims, a shard dim out of range, an unknown reduce op,
// inconsistent or partial [k] indices, mixed Partial ops other than sum+avg,
// or an undecodable StridedShard.
//
// Index rules: a tensor dim sharded on several mesh dims takes [k] on all its
// S tokens (a permutation of 0..n-1) or on none (default order); a tensor dim
// sharded once accepts [0] (what it would print as) and nothing else; [k]
// applies only to S(d), and a state that uses `_S` may not also use [k].
absl::StatusOr<ParsedState> ParseDistState(absl::string_view text, const DeviceMesh& mesh,
                                           int tensor_ndim);

// The state with each multiply-sharded mesh dim written as `_S(d, sf)` where
// sf > 1 (spec §7, encode); plain Shards print as `S(d)`.
std::string FormatStrided(const DistState& state, const DeviceMesh& mesh);

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_NOTATION_H_
