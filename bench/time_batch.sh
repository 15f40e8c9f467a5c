#!/usr/bin/env bash
# `reshard batch` on one cases file, for several binaries (e.g. before and
# after a change) in alternating rounds, so that the machine's load falls on
# all of them alike. Per round and binary: the best and the median wall time
# of `runs` runs (process start included, timed by bash's $EPOCHREALTIME so
# that no timer process is counted). Then each binary's output is compared
# byte for byte with the first's, and, where valgrind is installed, each
# binary's instruction count (callgrind, user space: deterministic).
#
#   bench/time_batch.sh CASES BIN [BIN...]        # ROUNDS=3 RUNS=20 by default
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/time_batch.sh CASES BIN [BIN...]" >&2; exit 2; }
cases=$1
shift
rounds=${ROUNDS:-3}
runs=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "best median" wall milliseconds of `runs` runs of BIN batch.
times_of() {
  local t0 t1
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME
    "$1" batch < "$cases" > /dev/null
    t1=$EPOCHREALTIME
    echo "($t1 - $t0) * 1000" | bc -l
  done | sort -g | awk '{ t[NR] = $1 } END { printf "best %.2f ms, median %.2f ms", t[1], t[int((NR + 1) / 2)] }'
}

echo "cases: $(grep -c . "$cases") ($cases); $runs runs per binary per round"
for round in $(seq "$rounds"); do
  for bin in "$@"; do echo "round $round: $bin: $(times_of "$bin")"; done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

i=0
for bin in "$@"; do
  "$bin" batch < "$cases" > "$tmp/out$i"
  if [ "$i" -gt 0 ]; then
    if cmp -s "$tmp/out0" "$tmp/out$i"; then echo "output: $bin identical to $1"; else
      echo "output: $bin DIFFERS from $1"
    fi
  fi
  i=$((i + 1))
done

if command -v valgrind >/dev/null; then
  for bin in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" batch < "$cases" 2>&1 >/dev/null |
      awk -v b="$bin" '/Collected/ { print "callgrind: " b " " $NF " instructions" }'
  done
fi
