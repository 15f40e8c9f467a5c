#include "cli/help.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace reshard {

std::string NotationHelp() {
  return R"txt(NOTATION
  A layout is one token per mesh dim, left to right:
    S(d)       Shard: tensor dim d is split across this mesh dim (S(-1) = last dim)
    R          Replicate: every rank along this mesh dim holds the same data
    P(op)      Partial: the value is the op-reduction over this mesh dim;
               op is sum, avg, max, min or prod; P alone means P(sum).
               One layout may mix only sum and avg.
    _S(d, sf)  StridedShard (input only): dim d was already split sf ways by
               mesh dims to the right before this split; decoded into a shard order.
  When several mesh dims shard the same tensor dim, suffix [k] gives the order
  in which the splits apply (k = 0 first); give it on all of them or on none
  (none = ascending mesh dims). Tokens may be separated by "," or spaces.
  Examples (3-D mesh):
    S(0)RR                 dim 0 split over mesh dim 0
    S(0)[1]S(0)[0]S(0)[2]  dim 0 split over mesh dim 1, then 0, then 2
    P(sum)S(1)R            pending sum over mesh dim 0, dim 1 split over mesh dim 1
    _S(0, 2)S(0)R          (mesh 2,2,...) the same as S(0)[1]S(0)[0]R
  A trace is the layouts a plan passes through, joined by "->".
)txt";
}

std::string ModesHelp() {
  return R"txt(MODES
  native   reshard's own planner (the default): steps over several mesh dims
           at once, permutes and exchanges (each rank receives exactly what
           it lacks), priced by NCCL's own model of a GPU cluster (nccl,
           spec §6.4; --cost-model alpha-beta for the textbook one),
           searched under --max-memory. Use it to run redistributions.
  pytorch  PyTorch DTensor's planner exactly: its edges, its pytorch or
           pytorch-const costs, identical traces. Use it to predict or
           reproduce what PyTorch does.
  Without a mode, a request that names a pytorch cost model (--cost-model
  pytorch|pytorch-const, or cost_model in a batch line) is planned in pytorch
  mode, so existing inputs keep their answers; --mode native with such a
  model is an error.
)txt";
}

std::string ExitCodesHelp() {
  return R"txt(EXIT CODES
  0  success
  1  verify: a case failed; any other command: an internal error (a bug);
     any command: the output could not be written (a full disk, a closed pipe);
     verify, calibrate, bench: reshard-backends is not beside reshard
  2  bad input; the message on stderr names the flag or token
  3  no plan: none exists (e.g. the greedy planner cannot do S -> P or
     P(x) -> P(y)), the graph search hit --max-states or --max-edges without
     a plan (native mode returns pytorch mode's plan or a cheaper one, with
     a note, where it has one), or no plan keeps every rank under
     --max-memory; a cross-mesh move past its size bounds; verify, bench:
     the ranks ran out of memory or threads (ulimit -v, -u)
)txt";
}

namespace {

// `text` as lines of at most `width` columns (words longer than that stay
// whole), each after `indent` spaces but the first, which starts after `first`.
std::string Wrap(absl::string_view text, size_t width, size_t indent) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, line, "\n", std::string(indent, ' '));
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  return absl::StrCat(out, line, "\n");
}

constexpr size_t kFlagColumn = 26;     // where a flag's help starts
constexpr size_t kCommandColumn = 13;  // where a command's summary starts
constexpr size_t kHelpWidth = 80;

// "  head    help..." with the help from `column` on, wrapped.
std::string Entry(absl::string_view head, absl::string_view help, size_t column) {
  std::string left = absl::StrCat("  ", head);
  if (left.size() + 2 > column) {
    return absl::StrCat(left, "\n", std::string(column, ' '),
                        Wrap(help, kHelpWidth - column, column));
  }
  left.resize(column, ' ');
  return absl::StrCat(left, Wrap(help, kHelpWidth - column, column));
}

}  // namespace

std::string CommandHelp(const Command& command) {
  std::string out = absl::StrCat(absl::StripTrailingAsciiWhitespace(command.about),
                                 "\n\nFLAGS (--flag value or --flag=value)\n");
  for (const FlagSpec& flag : command.flags) {
    if (flag.hidden) continue;
    absl::StrAppend(&out,
                    Entry(absl::StrCat("--", flag.name, flag.value.empty() ? "" : " ", flag.value),
                          flag.help, kFlagColumn));
  }
  absl::StrAppend(&out, Entry("--help", "this text", kFlagColumn), "\n", command.sections);
  return out;
}

std::string MainHelp(const std::vector<Command>& commands) {
  std::string list;
  for (const Command& c : commands)
    absl::StrAppend(&list, Entry(c.name, c.summary, kCommandColumn));
  return absl::StrCat(R"txt(reshard: plan and run tensor redistributions on N-D device meshes.

Given a tensor laid out one way on a device mesh (a Shard/Replicate/Partial
placement per mesh dim, plus a shard order), reshard finds the sequence of
collectives that turns it into another layout, and what it costs, and can run
a plan on real data to check and time it. It plans in two modes (see MODES):
native, the default, with its own steps (collectives over several mesh dims
at once, permutes, exchanges) priced by the nccl model; and pytorch, which gives
PyTorch DTensor's redistribute planner's plans exactly (identical traces).

USAGE
  reshard plan  --mesh 2,2,2 --shape 8,8,8 --src 'S(0)[1]S(0)[0]S(0)[2]' --dst 'RS(0)[0]S(0)[1]'
  reshard plan  ... --mode pytorch      (what PyTorch DTensor would do)
  reshard batch < cases.jsonl > results.jsonl
  reshard verify --mesh 2,2,2 --shape 13,8 --src 'S(0)[1]S(0)[0]S(1)' --dst 'RS(1)S(0)'
  reshard verify --random 300 --seed 7 --max-ranks 8
  reshard calibrate --mesh 2,4 --out profile.json
  reshard bench --mesh 2,4 --shape 1024,1024 --src 'S(0)S(1)' --dst 'S(1)S(0)'
  reshard help <command>        (or reshard <command> --help)

COMMANDS
)txt",
                      list, "\n", ModesHelp(), "\n", NotationHelp(), "\n", ExitCodesHelp());
}

}  // namespace reshard
