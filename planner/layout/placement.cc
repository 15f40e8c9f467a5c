#include "planner/layout/placement.h"

#include "absl/strings/str_cat.h"

namespace reshard {

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kProd:
      return "prod";
  }
  return "?";
}

std::optional<ReduceOp> ParseReduceOp(absl::string_view name) {
  for (int i = 0; i < kNumReduceOps; ++i) {
    ReduceOp op = static_cast<ReduceOp>(i);
    if (name == ReduceOpName(op)) return op;
  }
  return std::nullopt;
}

std::string Placement::ToString() const {
  switch (kind_) {
    case Kind::kReplicate:
      return "R";
    case Kind::kShard:  // every trace prints many, nearly all one digit
      if (dim() < 10) return std::string{'S', '(', static_cast<char>('0' + dim()), ')'};
      return absl::StrCat("S(", dim(), ")");
    case Kind::kPartial:
      return absl::StrCat("P(", ReduceOpName(op()), ")");
  }
  return "?";
}

}  // namespace reshard
