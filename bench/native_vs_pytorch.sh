#!/usr/bin/env bash
# Native mode's planning against pytorch mode's, and two builds' native plans
# against each other (issue 17): each line of CASES (a hard 4-D set, e.g.
# bench/data/hard4d_harder.jsonl) is planned as it is (pytorch mode, its
# cost_model) and with "mode": "native" and no cost_model (the default nccl
# model). For each binary: `reshard batch --timings` per line in both modes,
# ROUNDS rounds interleaved, and, where valgrind is installed, callgrind
# instructions (deterministic). With two binaries, the native outputs must
# have the same costs bit for bit (spec §5.2: ties may take another path of
# equal cost; those lines are counted); exit 1 otherwise.
#
#   bench/native_vs_pytorch.sh CASES BIN [BIN]        # ROUNDS=3 by default
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: bench/native_vs_pytorch.sh CASES BIN [BIN]" >&2; exit 2; }
cases=$1
shift
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$cases" "$tmp/native.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        if line.strip():
            case = json.loads(line)
            case.pop("cost_model", None)
            case["mode"] = "native"
            out.write(json.dumps(case) + "\n")
PY

# "N us/line" of one `reshard batch --timings` run.
per_line() { "$1" batch --timings < "$2" 2>&1 >/dev/null | sed 's/.*(\(.*\) us\/line).*/\1/'; }

echo "cases: $(grep -c . "$cases") ($cases)"
for round in $(seq "$rounds"); do
  for bin in "$@"; do
    p=$(per_line "$bin" "$cases")
    n=$(per_line "$bin" "$tmp/native.jsonl")
    echo "round $round: $bin: pytorch $p us/line, native $n us/line, native/pytorch $(echo "$n / $p" | bc -l | cut -c1-5)x"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if command -v valgrind >/dev/null; then
  instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" batch < "$2" 2>&1 >/dev/null |
      awk '/Collected/ { print $NF }'
  }
  for bin in "$@"; do
    p=$(instructions "$bin" "$cases")
    n=$(instructions "$bin" "$tmp/native.jsonl")
    echo "callgrind: $bin: pytorch $p, native $n instructions, native/pytorch $(echo "$n / $p" | bc -l | cut -c1-5)x"
  done
fi

[ $# -eq 2 ] || exit 0
"$1" batch < "$tmp/native.jsonl" > "$tmp/a.jsonl"
"$2" batch < "$tmp/native.jsonl" > "$tmp/b.jsonl"
python3 - "$tmp/a.jsonl" "$tmp/b.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
costs = sum(x["ok"] != y["ok"] or x.get("cost") != y.get("cost") for x, y in zip(a, b))
paths = sum(x.get("trace") != y.get("trace") for x, y in zip(a, b))
print(f"native plans: {len(a)} lines, costs differ on {costs}, another path of equal cost on "
      f"{paths - costs}")
sys.exit(1 if costs or len(a) != len(b) else 0)
PY
