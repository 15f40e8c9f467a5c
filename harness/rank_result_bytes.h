// A rank's result (its tensor and step counters) as bytes, for ranks that
// are processes or on other hosts: what a child rank hands back through
// harness/run_ranks.h, and what hosts exchange in their store.
//
//   "<size of the stats>\n<stats: one line per step><the tensor's bytes>"
//
// A stats line is "group kind src dst entries sent received shape", e.g.
// "2 1 8 0 - 96 96 4,6" (placements as kind * 8 + arg, entries as
// "mesh_dim:tensor_dim,..." or "-").
//
//   std::string bytes = EncodeRankResult(result);
//   absl::StatusOr<RankResult> back = DecodeRankResult(bytes, prepared, rank);
#ifndef RESHARD_HARNESS_RANK_RESULT_BYTES_H_
#define RESHARD_HARNESS_RANK_RESULT_BYTES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "harness/prepared_case.h"

namespace reshard {

std::string EncodeRankResult(const RankResult& r);

// The result of rank `rank` of `p` back; the tensor's shape is the dst
// shard's at the rank. DataLoss for malformed bytes or a wrong tensor size.
absl::StatusOr<RankResult> DecodeRankResult(absl::string_view bytes, const PreparedCase& p,
                                            int64_t rank);

}  // namespace reshard

#endif  // RESHARD_HARNESS_RANK_RESULT_BYTES_H_
