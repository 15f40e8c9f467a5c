// The flags that describe one planning request (--mesh, --shape, --src,
// --dst, --dtype, --mode, ...), declared once with one help text for every
// command that takes them; each command picks the ones it takes and adds its
// own flags, and reads them with ReadRequestFlags. Where a command reads one differently (verify's
// one case, bench's cost model), its own --help text says so.
//
//   Command PlanCommand() {
//     std::vector<FlagSpec> flags = RequestFlags({"mesh", "shape", "src", "dst"});
//     flags.push_back({"format", "FORMAT", "text; ..."});
//     ...
//   }
#ifndef RESHARD_CLI_REQUEST_FLAGS_H_
#define RESHARD_CLI_REQUEST_FLAGS_H_

#include <initializer_list>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "formats/request_json.h"

namespace reshard {

// The specs of the request flags `names` (without "--"), in that order. Each
// of: mesh, shape, src, dst, dtype, mode, algorithm, cost-model, profile,
// devices-per-host, dst-mesh, src-ranks, dst-ranks, max-memory (planning's
// bound), max-states, max-edges. Any other name is a programming error: it
// aborts (command_table_test builds every command's flags).
std::vector<FlagSpec> RequestFlags(std::initializer_list<absl::string_view> names);

// The hidden flags a command that runs ranks as processes starts each child
// rank with (--rank, --store-dir, --job; harness/run_ranks.h): parsed, not in
// --help. verify, bench and calibrate take them.
std::vector<FlagSpec> ChildRankFlags();

// Reads the request flags every command reads alike into `request`: --mesh
// and --shape, --src, --dst and --dtype (request's dtype when absent), and
// --dst-mesh, --src-ranks, --dst-ranks when given. InvalidArgument naming the
// flag (ParseIntList, ParseRankList); the rest (a layout, a dtype's name) is
// checked where the request is planned.
absl::Status ReadRequestFlags(const FlagValues& flags, RequestFields* request);

// Reads --cost-model, --profile and --devices-per-host (when given) into
// `request`, as plan and verify's cross-mesh cases take them (bench reads its
// own: its --cost-model prices pytorch mode only). InvalidArgument naming
// --devices-per-host when it is not an integer; the rest is checked where the
// request is planned.
absl::Status ReadCostModelFlags(const FlagValues& flags, RequestFields* request);

}  // namespace reshard

#endif  // RESHARD_CLI_REQUEST_FLAGS_H_
