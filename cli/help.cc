#include "cli/help.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/costs/cost_model.h"
#include "planner/costs/cost_model_registry.h"

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
           at once and permutes, priced by NCCL's own model of a GPU cluster
           (nccl, spec §6.3; --cost-model alpha-beta for the textbook one),
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
     any command: the output could not be written (a full disk, a closed pipe)
  2  bad input; the message on stderr names the flag or token
  3  no plan: none exists (e.g. the greedy planner cannot do S -> P or
     P(x) -> P(y)), the graph search hit --max-states, or no plan keeps
     every rank under --max-memory
)txt";
}

std::string MainHelp() {
  return absl::StrCat(R"txt(reshard: plan and run tensor redistributions on N-D device meshes.

Given a tensor laid out one way on a device mesh (a Shard/Replicate/Partial
placement per mesh dim, plus a shard order), reshard finds the sequence of
collectives that turns it into another layout, and what it costs (the same
plans as PyTorch DTensor's redistribute planner), and can run a plan on real
data to check it.

USAGE
  reshard plan  --mesh 2,2,2 --shape 8,8,8 --src 'S(0)[1]S(0)[0]S(0)[2]' --dst 'RS(0)[0]S(0)[1]'
  reshard batch < cases.jsonl > results.jsonl
  reshard verify --mesh 2,2,2 --shape 13,8 --src 'S(0)[1]S(0)[0]S(1)' --dst 'RS(1)S(0)'
  reshard verify --random 300 --seed 7 --max-ranks 8
  reshard calibrate --mesh 2,4 --out profile.json
  reshard help <command>        (or reshard <command> --help)

COMMANDS
  plan   plan one redistribution and print it (table, JSON or Graphviz)
  batch  plan one JSON case per stdin line, one JSON result per stdout line
  verify run plans on real data (Gloo on this machine, ranks as threads or
         processes) and check every rank's result
  costs  the cost of every (source, target) pair of a list of layouts
  calibrate  time the collectives on this machine and write an alpha-beta
         cost profile (--profile FILE; spec §6.2)

)txt",
                      NotationHelp(), "\n", ExitCodesHelp());
}

std::string PlanHelp() {
  return absl::StrCat(R"txt(reshard plan: plan one redistribution.

USAGE
  reshard plan --mesh 2,2,2 --shape 8,8,8 --src 'S(0)[1]S(0)[0]S(0)[2]' --dst 'RS(0)[0]S(0)[1]'

FLAGS (--flag value or --flag=value)
  --mesh SIZES            required; mesh dim sizes, e.g. 2,2,2
  --shape SIZES           required; global tensor shape, e.g. 8,8,8
  --src LAYOUT            required; source layout (see NOTATION)
  --dst LAYOUT            required; destination layout
  --dtype NAME            f32; one of f64 f32 f16 bf16 i64 i32 i16 i8 u8 bool
                          (or float32, bfloat16, int64, ...)
  --algorithm NAME        auto; auto, graph or greedy. auto is greedy unless a
                          shard order or StridedShard needs the graph planner,
                          which then also overrides greedy
  --mode MODE             native or pytorch (see MODES); default: pytorch when
                          --cost-model names a pytorch model, native otherwise
  --cost-model NAME       the mode's: nccl (native) or pytorch; one of: )txt",
                      absl::StrJoin(CostModelNames(), ", "), R"txt(
                          (all in microseconds but pytorch-const; nccl is
                          NCCL's own model of GPU clusters, spec §6.3;
                          alpha-beta a textbook latency-bandwidth model,
                          spec §6.2)
  --devices-per-host N    8; ranks per host, for the pytorch, alpha-beta and
                          nccl cost models (which ranks share a host)
  --profile NAME|FILE     the machine the model prices: for nccl a built-in
                          profile (h100-8x400g, the default; h200-8x400g,
                          a100-8x200g, b200-8x400g) or an nccl profile file;
                          for alpha-beta a JSON profile as reshard calibrate
                          writes. A file without --cost-model means
                          alpha-beta
  --coordinate C          0,...; the rank whose logical shapes are reported
  --max-memory BYTES      no limit; bytes any rank may hold at once (an integer,
                          optionally with K, M, G or T). Native mode plans only
                          steps under it; pytorch mode fails if its plan is over.
                          No plan under it: exit code 3
  --format FORMAT         text; text (a table), json (one object, as reshard
                          batch prints) or dot (Graphviz: | dot -Tpng > plan.png).
                          Every format names the mode and the plan's peak bytes
                          per rank (input + output + scratch of its largest step)
  --max-states N          1000000; bound on the states the graph search expands
  --help                  this text

)txt",
                      ModesHelp(), "\n", NotationHelp(), "\n", ExitCodesHelp());
}

std::string BatchHelp() {
  return absl::StrCat(R"txt(reshard batch: plan many redistributions, one JSON object per line.

USAGE
  reshard batch [--max-states N] [--timings] < cases.jsonl > results.jsonl

Each stdin line is a case; each stdout line is its result, in the same order
(blank lines are skipped). A bad line gives {"ok": false, "error": ...} and the
batch goes on.

INPUT KEYS
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
                    profile file (as --profile), read once per run
  coordinate        all zeros; the rank whose logical shapes are reported
  max_memory        none; bytes any rank may hold at once (a positive integer);
                    no plan under it is an error result
  expected          ignored (so test-data files can be fed as they are)
  Any other key is an error naming it. null means the default.

OUTPUT KEYS
  id, ok, algorithm (the planner actually used), cost, trace, steps, mode (the
  mode used) and peak_bytes (per rank: input + output + scratch of the largest
  step). Each step is {mesh_dim, src, dst, collective, logical_shape, cost};
  a step over several mesh dims adds mesh_dims (mesh_dim is their lowest) and,
  entering Shard, order (the order they join it); a permute adds its moves,
  [{mesh_dim, dst}, ...]. id, ok=false and error when ok is false (errors for
  requests without a plan start with "no_path", or "max memory" when none
  fits max_memory).
  Example:
    in:  {"id": "a", "mesh": [2], "shape": [8], "src": "S(0)", "dst": "R", "cost_model": "pytorch-const"}
    out: {"id":"a","ok":true,"algorithm":"greedy","cost":2.0,"trace":"S(0)->R","steps":[...],"mode":"pytorch","peak_bytes":96}

FLAGS
  --max-states N   1000000; bound on the states each graph search expands
  --timings        print the number of lines and the time taken to stderr
  --help           this text

)txt",
                      ModesHelp(), "\n", NotationHelp(), R"txt(
EXIT CODES
  0  every line was read (bad lines are reported in their results)
  1  internal error
  2  bad flags
)txt");
}

}  // namespace reshard
