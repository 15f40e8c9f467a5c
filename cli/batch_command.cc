// reshard batch: JSONL cases on stdin -> JSONL results on stdout, same order.
// Throughput matters (it is compared with the Python oracle): one buffered
// write per line and no flush unless a person is watching (stdout is a tty).
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "base/bounded_input.h"
#include "base/utf8.h"
#include "cli/case_json.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/help.h"

namespace reshard {

int RunBatchCommand(const std::vector<std::string>& args) {
  FlagParser parser("batch", {{"max-states", true}, {"max-edges", true}, {"timings", false},
                              {"help", false}});
  absl::StatusOr<FlagValues> flags = parser.Parse(args);
  if (!flags.ok()) {
    std::cerr << "reshard: " << Utf8Valid(flags.status().message()) << "\n";
    return kExitBadInput;
  }
  if (flags->Has("help")) {
    std::cout << BatchHelp();
    return kExitOk;
  }
  int64_t max_states = PlanRequest().max_states;
  if (flags->Has("max-states")) {
    absl::StatusOr<int64_t> n = ParseInt("max-states", flags->Get("max-states"));
    if (!n.ok() || *n < 1) {
      std::cerr << "reshard: --max-states: \"" << flags->Get("max-states")
                << "\" is not a positive integer\n";
      return kExitBadInput;
    }
    max_states = *n;
  }
  int64_t max_edges = PlanRequest().max_edges;  // each line may set its own ("max_edges")
  if (flags->Has("max-edges")) {
    absl::StatusOr<int64_t> n = ParseInt("max-edges", flags->Get("max-edges"));
    if (!n.ok() || *n < 1 || *n > kMaxSearchEdgesLimit) {
      std::cerr << "reshard: --max-edges: \"" << Abbreviate(flags->Get("max-edges"), 64)
                << "\" is not an integer from 1 to " << kMaxSearchEdgesLimit << "\n";
      return kExitBadInput;
    }
    max_edges = *n;
  }
  const bool timings = flags->Has("timings");

  // Each case's search grows the heap by a few hundred KiB and frees it all;
  // glibc would hand that back to the kernel after every case (trimming the
  // top) and fault the pages in again for the next, a fifth of the time per
  // case here. Keeping some slack at the top makes the pages stay.
  mallopt(M_TOP_PAD, 16 << 20);
  std::ios::sync_with_stdio(false);
  const bool interactive = isatty(STDOUT_FILENO);
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
                       absl::InvalidArgumentError(absl::StrCat(
                           "line ", reader.number(), ": longer than ", kMaxBatchLineBytes,
                           " bytes, the limit of a batch line")),
                       &out);
    } else {
      AppendCaseResult(text, max_states, &out, &profiles, max_edges);
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (interactive) std::fflush(stdout);
    if (std::ferror(stdout)) break;  // main() reports it; reading on would be wasted work
  }
  if (timings) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << absl::StrFormat("reshard batch: %d lines in %.3f s (%.1f us/line)\n", lines,
                                 seconds, lines ? seconds * 1e6 / lines : 0.0);
  }
  return kExitOk;
}

}  // namespace reshard
