#!/usr/bin/env bash
# Native mode's busiest sender against the receive lower bound on every case
# of the given suites (one-mesh and cross-mesh alike), from `reshard bench
# --dry-run --format json` (bytes counted from the plan, which the run's
# counters equal: cli/bench/bench_command_test.cc). The issue 16 bar: at most 1.05 for
# sources without Partial (a Partial source must also reduce, so its ranks
# send contributions the bound does not count). Plans only; runs nothing.
#
#   bench/bytes_vs_bound.sh bench/suite.jsonl bench/cross_mesh_suite.jsonl [-- extra flags]
set -euo pipefail
cd "$(dirname "$0")/.."
suites=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do suites+=("$1"); shift; done
[ $# -gt 0 ] && shift
extra=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(bench/suite.jsonl bench/cross_mesh_suite.jsonl)

source bench/opt_reshard.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "command: bench/bytes_vs_bound.sh ${suites[*]} ${extra[*]:+-- ${extra[*]}}"
echo
echo "| suite | case | Partial source | native bytes sent max | receive lower bound | ratio | <= 1.05 |"
echo "| --- | --- | --- | ---: | ---: | ---: | --- |"
for suite in "${suites[@]}"; do
  while IFS= read -r line; do
    [ -z "${line// }" ] && continue
    python3 bench/case_flags.py "$line" >"$tmp/case"
    name=$(head -1 "$tmp/case")
    mapfile -t flags < <(tail -n +2 "$tmp/case")
    "$reshard" bench "${flags[@]}" "${extra[@]}" --modes native --dry-run --format json \
      >"$tmp/dry"
    python3 - "$suite" "$name" "$line" "$tmp/dry" <<'PY'
import json, sys
suite, name, case, dry = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.load(open(sys.argv[4]))
partial = "P(" in case["src"]
sent, bound = dry["bytes_sent_max"]["native"], dry["receive_bound_max"]
ratio = sent / bound if bound else float("inf") if sent else 1.0
ok = "n/a (Partial)" if partial else ("yes" if ratio <= 1.05 else "**NO**")
print(f"| {suite.split('/')[-1]} | {name} | {'yes' if partial else 'no'} | {sent} | {bound} | {ratio:.3f} | {ok} |")
PY
  done <"$suite"
done
