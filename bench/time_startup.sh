#!/usr/bin/env bash
# Wall time of `reshard plan` on a small case, averaged over 50 runs, next to
# a static do-nothing process as the machine's floor (fork + exec + exit).
#
#   bench/time_startup.sh [reshard binaries...]     # default: the -c opt build
#
# Several binaries (e.g. before and after) are timed in alternating rounds so
# that the machine's load falls on all of them alike.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  bazel build -c opt //cli:reshard >/dev/null 2>&1 || bazel build -c opt //cli:reshard
  set -- "$(bazel info -c opt bazel-bin 2>/dev/null)/cli/reshard"
fi
runs=50
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
      "$(per_run "$bin" plan --mesh 2,2 --shape 8,8 --src 'S(0)R' --dst 'RS(1)')"
  done
  echo
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
