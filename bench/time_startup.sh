#!/usr/bin/env bash
# Wall time of `reshard plan` on a small case, averaged over 50 runs, next to
# a static do-nothing process as the machine's floor (fork + exec + exit).
# Then, where perf and valgrind are installed, the same run's `perf stat -r 50`
# (wall clock, CPU time, page faults) and callgrind's instruction count for
# each binary.
#
#   bench/time_startup.sh [reshard binaries...]     # default: the -c opt build
#
# Several binaries (e.g. before and after) are timed in alternating rounds so
# that the machine's load falls on all of them alike.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  source bench/opt_reshard.sh
  set -- "$reshard"
fi
runs=50
case=(plan --mesh 2,2 --shape 8,8 --src 'S(0)R' --dst 'RS(1)')
rounds=${ROUNDS:-3}
floor=$(mktemp -d)
trap 'rm -rf "$floor"' EXIT
printf 'int main(void) { return 0; }\n' > "$floor/true.c"
cc -O2 -static "$floor/true.c" -o "$floor/true"

# Milliseconds per run of "$@" over $runs runs.
per_run() {
  local t0 t1
  t0=$(date +%s%N)
  for _ in $(seq "$runs"); do "$@" > /dev/null; done
  t1=$(date +%s%N)
  echo "scale=3; ($t1 - $t0) / 1000000 / $runs" | bc -l
}

for round in $(seq "$rounds"); do
  printf 'round %d: static true %6.3f ms' "$round" "$(per_run "$floor/true")"
  for bin in "$@"; do
    printf ' | %s %6.3f ms' "$bin" \
      "$(per_run "$bin" "${case[@]}")"
  done
  echo
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

label() { if [[ "$1" == "$floor/true" ]]; then echo "static true"; else echo "$1"; fi; }

# perf stat's mean over $runs runs: wall (elapsed), CPU (task-clock), faults.
if perf stat -e task-clock true >/dev/null 2>&1; then
  for round in $(seq "$rounds"); do
    for bin in "$floor/true" "$@"; do
      args=("${case[@]}")
      [[ "$bin" == "$floor/true" ]] && args=()
      perf stat -r "$runs" -e task-clock,page-faults "$bin" "${args[@]}" 2>&1 >/dev/null |
        awk -v r="$round" -v b="$(label "$bin")" '
          /task-clock/ { cpu = $1 } /page-faults/ { faults = $1 }
          /time elapsed/ { wall = $1 * 1000 }
          END { printf "perf round %d: %s wall %.3f ms, CPU %s ms, %s page faults\n", r, b, wall, cpu, faults }'
    done
  done
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
# Instructions executed (user space, deterministic).
if command -v valgrind >/dev/null; then
  for bin in "$floor/true" "$@"; do
    args=("${case[@]}")
    [[ "$bin" == "$floor/true" ]] && args=()
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "${args[@]}" 2>&1 >/dev/null |
      awk -v b="$(label "$bin")" '/Collected/ { print "callgrind: " b " " $NF " instructions" }'
  done
fi
