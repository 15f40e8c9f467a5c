#!/usr/bin/env bash
# Batch planning, reshard vs the Python oracle, side by side on the same cases
# and the same machine, in one run. Checks the answers agree, then prints both
# wall times and their ratio.
#
#   bench/compare_oracle.sh [cases.jsonl] [repeats]
#
# The oracle runs `repeats` times, reshard 10 times as many (at least 20;
# RESHARD_REPEATS overrides): a reshard run takes milliseconds, so one
# descheduling on a shared machine can double it, and more runs cost nothing.
#
# Default cases: bench/data/hard4d.jsonl (200 hard 4-D graph cases). The
# oracle lives outside this repository (../shared/oracle/refplanner.py, or
# $RESHARD_ORACLE); this is a measurement, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-bench/data/hard4d.jsonl}
repeats=${2:-3}
reshard_repeats=${RESHARD_REPEATS:-$((repeats * 10 > 20 ? repeats * 10 : 20))}
oracle=${RESHARD_ORACLE:-../shared/oracle/refplanner.py}
[ -f "$oracle" ] || { echo "compare_oracle: oracle not found at $oracle (set RESHARD_ORACLE)" >&2; exit 2; }

source bench/opt_reshard.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# Best of $1 wall times of the rest, in seconds; bash's own clock, so that no
# timer process (date) is counted in the time of either side.
best() {
  local best="" t0 t1 t runs=$1
  shift
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME; "$@" < "$cases" > "$tmp/out"; t1=$EPOCHREALTIME
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}

t_oracle=$(best "$repeats" python3 "$oracle" batch); cp "$tmp/out" "$tmp/oracle.jsonl"
t_reshard=$(best "$reshard_repeats" "$reshard" batch); cp "$tmp/out" "$tmp/reshard.jsonl"
# The same runs' planning alone, as `batch --timings` measures it from the
# first line read to the last written: without the process start (dynamic
# loading), which is a large part of the wall time once planning is fast.
t_inside=""
for _ in $(seq "$reshard_repeats"); do
  t=$("$reshard" batch --timings < "$cases" 2>&1 >/dev/null | sed -n 's/.* in \([0-9.]*\) s .*/\1/p')
  if [ -z "$t_inside" ] || [ "$(echo "$t < $t_inside" | bc -l)" = 1 ]; then t_inside=$t; fi
done

python3 - "$tmp/oracle.jsonl" "$tmp/reshard.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b), (len(a), len(b))
for x, y in zip(a, b):
    same = x["ok"] == y["ok"] and (not x["ok"] or (x["trace"] == y["trace"] and x["algorithm"] == y["algorithm"]
            and abs(x["cost"] - y["cost"]) <= 1e-9 * max(1.0, abs(x["cost"]))))
    if not same:
        sys.exit(f"compare_oracle: answers differ on {x.get('id')}: {x} vs {y}")
print(f"answers agree on {len(a)} cases")
PY
n=$(grep -c . "$cases")
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
[ -z "$(git status --porcelain -uno 2>/dev/null)" ] || commit="$commit + uncommitted changes"
echo "cases: $n ($cases), $(date -u '+%Y-%m-%d %H:%M UTC'); best of $repeats oracle runs, best of $reshard_repeats reshard runs"
echo "reshard: $reshard (-c opt, worktree at $commit)"
echo "load average: before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'oracle  (python3)  wall: %8.4f s  %8.1f us/case\n' "$t_oracle" \
  "$(echo "$t_oracle * 1000000 / $n" | bc -l)"
printf 'reshard batch      wall: %8.4f s  %8.1f us/case  (process start included)\n' "$t_reshard" \
  "$(echo "$t_reshard * 1000000 / $n" | bc -l)"
printf 'reshard planning alone : %8.4f s  %8.1f us/case  (batch --timings: first line read to last written)\n' \
  "$t_inside" "$(echo "$t_inside * 1000000 / $n" | bc -l)"
printf 'SPEED-UP, WALL (the issue 17 ratio): %8.1fx\n' "$(echo "$t_oracle / $t_reshard" | bc -l)"
printf 'speed-up, planning alone           : %8.1fx\n' "$(echo "$t_oracle / $t_inside" | bc -l)"
