// reshard batch: JSONL cases on stdin -> JSONL results on stdout, same order.
// Throughput matters (it is compared with the Python oracle): one write per
// line, flushed before the next line is planned, so that a later crash or
// kill never loses an earlier answer (issue 44).
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/bounded_input.h"
#include "base/utf8.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"
#include "formats/batch_line.h"
#include "formats/request_json.h"
#include "formats/result_json.h"
#include "planner/costs/cost_model_registry.h"

namespace reshard {

namespace {

CommandResult RunBatch(const FlagValues& flags, const std::vector<std::string>&) {
  int64_t max_states = RequestFields().max_states;
  if (flags.Has("max-states")) {
    absl::StatusOr<int64_t> n = ParseInt("max-states", flags.Get("max-states"));
    if (!n.ok() || *n < 1) {
      return Fail(
          absl::StrCat("--max-states: \"", flags.Get("max-states"), "\" is not a positive integer"),
          kExitBadInput);
    }
    max_states = *n;
  }
  int64_t max_edges = RequestFields().max_edges;  // each line may set its own ("max_edges")
  if (flags.Has("max-edges")) {
    absl::StatusOr<int64_t> n = ParseInt("max-edges", flags.Get("max-edges"));
    if (!n.ok() || *n < 1 || *n > kMaxSearchEdgesLimit) {
      return Fail(absl::StrCat("--max-edges: \"", Abbreviate(flags.Get("max-edges"), 64),
                               "\" is not an integer from 1 to ", kMaxSearchEdgesLimit),
                  kExitBadInput);
    }
    max_edges = *n;
  }
  const bool timings = flags.Has("timings");

  // Each case's search grows the heap by a few hundred KiB and frees it all;
  // glibc would hand that back to the kernel after every case (trimming the
  // top) and fault the pages in again for the next, a fifth of the time per
  // case here. Keeping some slack at the top makes the pages stay.
  mallopt(M_TOP_PAD, 16 << 20);
  std::ios::sync_with_stdio(false);
  static char buffer[1 << 16];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof(buffer));

  auto start = std::chrono::steady_clock::now();
  int64_t lines = 0;
  std::string line;
  std::string out;
  ProfileCache profiles;  // a 10,000-line batch naming one profile reads it once
  // Each line is bounded while it is read (issue 20): an endless or huge
  // line is answered with an error and skipped without being kept.
  LineReader reader(std::cin, kMaxBatchLineBytes);
  for (LineReader::Result r; (r = reader.Next(&line)) != LineReader::kEnd;) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (r == LineReader::kLine && text.empty()) continue;  // as the oracle does
    ++lines;
    out.clear();
    if (r == LineReader::kTooLong) {
      AppendResultJson(nlohmann::json(),
                       absl::InvalidArgumentError(
                           absl::StrCat("line ", reader.number(), ": longer than ",
                                        kMaxBatchLineBytes, " bytes, the limit of a batch line")),
                       &out);
    } else {
      AppendCaseResult(text, max_states, &out, &profiles, max_edges);
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (std::ferror(stdout)) break;  // main() reports it; reading on would be wasted work
  }
  if (timings) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << absl::StrFormat("reshard batch: %d lines in %.4f s (%.1f us/line)\n", lines,
                                 seconds, lines ? seconds * 1e6 / lines : 0.0);
  }
  return kExitOk;
}

// reshard batch --help before FLAGS.
constexpr char kAbout[] = R"txt(reshard batch: plan many redistributions, one JSON object per line.

USAGE
  reshard batch [--max-states N] [--max-edges N] [--timings] < cases.jsonl > results.jsonl

Each stdin line is a case; each stdout line is its result, in the same order
(blank lines are skipped). A bad line gives {"ok": false, "error": ...} and the
batch goes on; so does a line over 1 MiB, which is skipped unread.
)txt";

}  // namespace

Command BatchCommand() {
  return {"batch",
          "plan one JSON case per stdin line, one JSON result per stdout line",
          kAbout,
          {{"max-states", "N", "1000000; bound on the states each graph search expands"},
           {"max-edges", "N", "1000000; bound on the edges each graph search generates"},
           {"timings", "", "print the number of lines and the time taken to stderr"}},
          absl::StrCat(R"txt(INPUT KEYS
  id                any JSON value, echoed back (default null)
  mesh, shape       required; lists of integers, e.g. [2, 2, 2]
  src, dst          required; layouts (see NOTATION)
  dtype             "f32"
  algorithm         "auto" ("graph", "greedy")
  mode              "native" or "pytorch" (see MODES); default: pytorch when
                    cost_model names a pytorch model, native otherwise
  cost_model        the mode's: "nccl" (native) or "pytorch"; one of ")txt",
                       absl::StrJoin(CostModelNames(), "\", \""), R"txt("
  devices_per_host  8
  profile           none; an nccl profile name or file, or an "alpha-beta"
                    profile file (as --profile),
                    read once per run
  coordinate        all zeros; the rank whose logical shapes are reported
  max_memory        none; bytes any rank may hold at once (a positive integer);
                    no plan under it is an error result
  max_edges         --max-edges; bound on the edges this case's search generates
  dst_mesh          mesh; the destination's mesh (a list of integers)
  src_ranks         [0, ..., size - 1]; the global ranks of mesh's ranks
  dst_ranks         [0, ..., size - 1]; the global ranks of dst_mesh's ranks.
                    Any of the three not its default: a cross-mesh move
                    (spec §14; no coordinate; under max_memory the
                    crossing runs in rounds)
  expected          ignored (so test-data files can be fed as they are)
  Any other key is an error naming it. null means the default.

OUTPUT KEYS
  id, ok, algorithm (the planner actually used), cost, trace, steps, mode (the
  mode used), peak_bytes (per rank: input + output + scratch of the largest
  step) and cost_model (the model the plan was priced with: its name, profile
  and parameters, e.g. "pytorch devices_per_host=8"). Each step is {mesh_dim, src, dst, collective, logical_shape, cost};
  a step over several mesh dims adds mesh_dims (mesh_dim is their lowest) and,
  entering Shard, order (the order they join it); a permute or an exchange
  adds its moves, [{mesh_dim, dst}, ...] (dst "S(d)" or, exchange, "R"). id,
  ok=false and error when ok is false (errors for requests without a plan
  start with "no_path", or "max_memory" when none fits max_memory). A limit
  hit adds "limit": the library field that was hit ("max_expanded_states",
  "max_search_edges" or "max_memory").
  A cross-mesh move's result: id, ok, cross_mesh (true), cost (null when
  the model prices no exchange: the pytorch models), peak_bytes, src_mesh,
  dst_mesh, src_ranks, dst_ranks, before and after (steps on each mesh),
  crossing {src, dst, cost, participants, slices, rounds, rounds_for (null,
  "memory", "relaying" or "rails"), pairs [{src, dst, bytes}], bytes_sent,
  max_bytes_sent, receive_lower_bound_max}, mode, cost_model.
  Example:
    in:  {"id": "a", "mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", "cost_model": "pytorch-const"}
    out: {"id":"a","ok":true,"algorithm":"greedy","cost":2.0,"trace":"S(0)->R","steps":[...],"mode":"pytorch","peak_bytes":96,"cost_model":"pytorch-const"}

)txt",
                       ModesHelp(), "\n", NotationHelp(), R"txt(
EXIT CODES
  0  every line was read (bad lines are reported in their results)
  1  internal error, or the output could not be written
  2  bad flags
)txt"),
          "reshard",
          RunBatch};
}

}  // namespace reshard
