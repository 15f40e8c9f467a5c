// Placement: what one mesh dim does to the tensor (spec §1).
//
//   Placement::Shard(0)                 S(0)  split tensor dim 0 across the mesh dim
//   Placement::Replicate()              R     every rank holds the same data
//   Placement::Partial(ReduceOp::kSum)  P(sum) the value is the reduction of the ranks'
//
// StridedShard (`_S(d, sf)`) exists only in the notation: it is decoded into
// plain Shards plus a shard order (spec §7, notation.h).
#ifndef RESHARD_PLANNER_LAYOUT_PLACEMENT_H_
#define RESHARD_PLANNER_LAYOUT_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace reshard {

// Ops in the order the graph planner tries them (spec §4, case 6).
enum class ReduceOp : uint8_t { kSum = 0, kAvg = 1, kMax = 2, kMin = 3, kProd = 4 };
inline constexpr int kNumReduceOps = 5;

// "sum", "avg", "max", "min", "prod".
absl::string_view ReduceOpName(ReduceOp op);
std::optional<ReduceOp> ParseReduceOp(absl::string_view name);

// The one rule for which Partial ops a state may hold at once (spec §4,
// case 6): one op, or exactly {sum, avg}. `ops` is a mask of (1 << op).
constexpr bool PartialOpsCompatible(unsigned ops) {
  constexpr unsigned kSumAvg =
      (1u << static_cast<int>(ReduceOp::kSum)) | (1u << static_cast<int>(ReduceOp::kAvg));
  return (ops & (ops - 1)) == 0 || ops == kSumAvg;
}

class Placement {
 public:
  enum class Kind : uint8_t { kReplicate = 0, kShard = 1, kPartial = 2 };

  static constexpr Placement Replicate() { return Placement(Kind::kReplicate, 0); }
  static constexpr Placement Shard(int tensor_dim) {
    return Placement(Kind::kShard, static_cast<uint8_t>(tensor_dim));
  }
  static constexpr Placement Partial(ReduceOp op = ReduceOp::kSum) {
    return Placement(Kind::kPartial, static_cast<uint8_t>(op));
  }

  constexpr Placement() : Placement(Kind::kReplicate, 0) {}

  constexpr Kind kind() const { return kind_; }
  constexpr bool is_replicate() const { return kind_ == Kind::kReplicate; }
  constexpr bool is_shard() const { return kind_ == Kind::kShard; }
  constexpr bool is_partial() const { return kind_ == Kind::kPartial; }
  // Only for is_shard().
  constexpr int dim() const { return arg_; }
  // Only for is_partial().
  constexpr ReduceOp op() const { return static_cast<ReduceOp>(arg_); }

  // "S(0)", "R", "P(sum)".
  std::string ToString() const;

  friend constexpr bool operator==(Placement a, Placement b) {
    return a.kind_ == b.kind_ && a.arg_ == b.arg_;
  }
  friend constexpr bool operator!=(Placement a, Placement b) { return !(a == b); }

 private:
  constexpr Placement(Kind kind, uint8_t arg) : kind_(kind), arg_(arg) {}
  Kind kind_;
  uint8_t arg_;  // tensor dim for Shard, ReduceOp for Partial, 0 for Replicate
};

}  // namespace reshard

#endif  // RESHARD_PLANNER_LAYOUT_PLACEMENT_H_
