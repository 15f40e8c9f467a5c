#!/usr/bin/env bash
# The cross-mesh suite (bench/cross_mesh_suite.jsonl, spec §14): `reshard
# bench --format json` on every case, native against the naive baseline
# (gather on the first source rank, send to the first destination rank,
# scatter) in one run, as a markdown table.
#
#   bench/run_cross_mesh_suite.sh [suite.jsonl] [repeat] [extra reshard bench flags...]
#   bench/run_cross_mesh_suite.sh bench/cross_mesh_suite.jsonl 7
#
# Columns: participants (threads), each mode's measured median
# (microseconds, the slowest participant's call, interleaved rounds),
# naive/native (> 1: native is faster), each mode's predicted time ("-"
# where the model prices no exchange), the most bytes a participant sent in
# each mode against the most any must receive (harness/receive_bound.h), native's
# ratio of the two, and whether both results were verified. A measurement
# on whatever machine runs it, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-bench/cross_mesh_suite.jsonl}
repeat=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")

source bench/opt_reshard.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "command: bench/run_cross_mesh_suite.sh $suite $repeat ${extra[*]:-}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
n=0
while IFS= read -r line; do
  [ -z "${line// }" ] && continue
  n=$((n + 1))
  python3 bench/case_flags.py "$line" >"$tmp/case"
  name=$(head -1 "$tmp/case")
  mapfile -t flags < <(tail -n +2 "$tmp/case")
  set +e
  "$reshard" bench "${flags[@]}" "${extra[@]}" --modes native,naive --repeat "$repeat" \
    --format json >"$tmp/modes.$n" 2>"$tmp/err.$n"
  set -e
  echo "$name" >"$tmp/name.$n"
done <"$suite"

python3 - "$tmp" "$n" <<'PY'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
print("| case | participants | native median us | naive median us | naive/native | predicted us native / naive | bytes sent max native / naive / lower bound | native sent / bound | verified native / naive |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for i in range(1, n + 1):
    name = open(f"{tmp}/name.{i}").read().strip()
    modes = {}
    for l in open(f"{tmp}/modes.{i}"):
        if l.strip():
            r = json.loads(l)
            modes[r["mode"]] = r
    nat, nai = modes.get("native", {}), modes.get("naive", {})
    def med(r):
        return r.get("measured_us", {}).get("median") if r.get("verified") else None
    a, b = med(nat), med(nai)
    cell = lambda v: "-" if v is None else f"{v:.0f}"
    ratio = f"{b / a:.2f}x" if a and b else "-"
    bound = nat.get("receive_lower_bound_max", nai.get("receive_lower_bound_max"))
    sent = f"{nat.get('bytes_sent_max', '-')} / {nai.get('bytes_sent_max', '-')} / {bound}"
    own = f"{nat['bytes_sent_max'] / bound:.3f}" if nat and bound else "-"
    ver = f"{'yes' if nat.get('verified') else 'NO'} / {'yes' if nai.get('verified') else 'NO'}"
    parts = nat.get("participants", nai.get("participants", "-"))
    pred = f"{cell(nat.get('predicted_us'))} / {cell(nai.get('predicted_us'))}"
    print(f"| {name} | {parts} | {cell(a)} | {cell(b)} | {ratio} | {pred} | {sent} | {own} | {ver} |")
    err = open(f"{tmp}/err.{i}").read().strip()
    if err:
        print(f"<!-- {name}: {err.splitlines()[0][:200]} -->")
print()
print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")
PY
