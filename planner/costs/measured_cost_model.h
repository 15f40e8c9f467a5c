// The "measured" cost model (spec §6.3): what `reshard calibrate` measured on
// this machine, used as it is. A profile holds one table per collective kind
// and group size (measured_table.h); a step is priced by its table at the
// bytes spec §6.2 counts for it (block_bytes.h):
//
//   * a group size that was measured: the table's interpolation (log-log
//     between samples, the table's fitted formula beyond them);
//   * a size between two measured ones of the kind (e.g. 3 between 2 and 4):
//     log-log interpolation over the group size of those two tables' prices;
//   * otherwise (a kind not measured, a size outside the measured ones):
//     alpha-beta's formula (§6.2) on the profile's machine links;
//   * chunk and partition: bytes / memory_gbps, as alpha-beta;
//   * an exchange, and a permute (the executor runs both alike), by its
//     busiest member's bytes (ExchangeUs): the gather exchange's table on
//     the group's n ranks where the profile has them (calibrate measures
//     every member sending its block to every other, packed and placed as
//     the executor does; Gloo's alltoallv messages every member, data or
//     not), else one message by the permute table and M >= 2 messages as
//     the all_to_all that sends as many;
//   * a reduction of elements under 4 bytes at the bytes of as many 4-byte
//     elements (Gloo reduces on the host element by element).
//
//   absl::StatusOr<MeasuredProfile> profile = ReadMeasuredProfileFile(path);  // cli
//   absl::StatusOr<std::shared_ptr<const CostModel>> model =
//       MakeMeasuredCostModel(*profile, /*devices_per_host=*/8);
//
// Its tie resolution (CostModel::tie_resolution) is the 75th percentile of
// the tables' held-out error (each sample priced without it), at most 50%.
//
// It offers no lower bounds (BoundCostModel::LowerBound is 0): measured
// prices need not add up over mesh dims as spec §5.2's bounds require (on
// Gloo an all_to_all over 8 ranks can cost less than over 2 and 4 in turn),
// so the graph search runs as plain Dijkstra with it.
#ifndef RESHARD_PLANNER_COSTS_MEASURED_COST_MODEL_H_
#define RESHARD_PLANNER_COSTS_MEASURED_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/measured_table.h"

namespace reshard {

struct MeasuredProfile {
  // name, the machine-wide alpha-beta fit (intra_host, inter_host) used where
  // no table applies, and memory_gbps for local copies.
  CostProfile machine;
  std::vector<MeasuredTable> tables;  // at most one per (kind, n)
};

// InvalidArgument naming the field ("tables[2].n: ...", "intra_host.alpha_us:
// ..."): an invalid machine profile or table, no tables, or two tables for one
// kind and group size.
absl::Status ValidateMeasuredProfile(const MeasuredProfile& profile);

// The prices of a valid profile by kind, group size and bytes, on `link`
// where no table applies (the rules above). Copyable; does not allocate per
// price.
class MeasuredPrices {
 public:
  explicit MeasuredPrices(const MeasuredProfile& profile);
  double PriceUs(StepKind kind, int64_t n, double bytes, const LinkProfile& link) const;
  // An exchange (or a cross-mesh crossing) whose busiest member sends or
  // receives `messages` messages and `bytes` (the more of sent and received),
  // on a group of n (spec §6.3): by the exchange tables on n ranks (past
  // the largest, log-log over n through the two largest), else one
  // message by the permute table on n and M >= 2 as the all_to_all on M + 1
  // ranks that sends the same.
  double ExchangeUs(int64_t n, int64_t messages, double bytes, const LinkProfile& link) const;

 private:
  // Tables of each kind (indexed by StepKind), by increasing n.
  std::vector<std::vector<MeasuredTable>> by_kind_;
};

// The model with a profile (validated: InvalidArgument otherwise) and
// devices_per_host (>= 1; which mesh dims use inter_host where a price falls
// back to the formula). Fingerprint: "measured profile=NAME tables=K
// digest=HEX devices_per_host=N", the digest a hash of every number.
absl::StatusOr<std::shared_ptr<const CostModel>> MakeMeasuredCostModel(
    const MeasuredProfile& profile, int64_t devices_per_host);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COSTS_MEASURED_COST_MODEL_H_
