// The executor: runs a plan (planner/planner.h) on one rank's local shard,
// turning every step into a collective on the group of its mesh dims,
// exactly as spec §11 describes (padding uneven shards to equal chunks,
// trimming after, zero-size shards, size-1 mesh dims never communicating).
// Native steps (spec §4.2) too: a collective over several mesh dims runs on
// their flattened group with every member's nested slice (planner/layout/chunk.h,
// GroupSlices) padded to the largest; a permute exchanges exact pieces
// (planner/steps/permute_exchange.h) with Communicator::AllToAllV.
//
//   // On every rank, with the same src, dst and plan:
//   LocalTensor t = ...;  // this rank's shard of src: src.LocalShape(coordinate)
//   ExecutionStats stats;
//   absl::Status s = Redistribute(t, src, dst, *plan, comm, &stats);
//   // t now holds this rank's shard of dst: dst.LocalShape(coordinate)
//
// Logical shapes: the executor computes each step's logical shape for its own
// rank from the state it is in (spec §10: the global shape split by every
// other current shard, in shard order), so one plan serves every rank even
// when a TransformInfo's logical_shape was made for another coordinate or by
// the greedy planner (spec §8), whose logical shapes ignore shard order. The
// plan's steps are checked with CheckStep and replayed with ApplyStep
// (planner/steps/step.h), the same rules the planner uses.
//
// Errors (every message names the step, its transition and mesh dims):
// InvalidArgument when the tensor, specs, communicator and plan do not fit
// together (checked before any communication, identically on every rank, so
// a bad plan fails everywhere rather than hanging); Unimplemented for R->P(prod)
// over two or more ranks (RunsOnData, spec §11); the communicator's errors (timeouts, lost peers)
// otherwise. After an error, t's contents are unspecified.
#ifndef RESHARD_COLLECTIVES_EXECUTOR_H_
#define RESHARD_COLLECTIVES_EXECUTOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "collectives/communicator.h"
#include "collectives/execution_stats.h"
#include "collectives/tensor/local_tensor.h"
#include "planner/layout/dist_spec.h"
#include "planner/steps/plan.h"
#include "planner/steps/step.h"
#include "planner/steps/step_bytes.h"

namespace reshard {

// Runs `plan` (from src to dst) on this rank. `t` must hold this rank's shard
// of src (shape src.LocalShape(comm.coordinate()), src's dtype, in
// comm.memory_space()); on success it is replaced by the rank's shard of dst.
// The buffer t held on entry may be overwritten (it serves as scratch, e.g.
// for in-place all_reduce), also when t is a View of caller memory.
// Collective: every rank of comm.mesh() must call it with the same arguments
// but its own t. `stats` (optional) receives one entry per plan step.
absl::Status Redistribute(LocalTensor& t, const DistSpec& src, const DistSpec& dst,
                          const Plan& plan, Communicator& comm, ExecutionStats* stats = nullptr);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_EXECUTOR_H_
