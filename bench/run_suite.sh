#!/usr/bin/env bash
# The redistribution suite (bench/suite.jsonl): `reshard bench --format json`
# on every case, both modes side by side in one run, as a markdown table.
#
#   bench/run_suite.sh [suite.jsonl] [repeat] [extra reshard bench flags...]
#   bench/run_suite.sh bench/suite.jsonl 7 --profile bench/profiles/gloo-loopback.json
#
# Columns: each mode's measured median (microseconds, the slowest rank's
# Redistribute per round, interleaved rounds), pytorch/native ratio (> 1:
# native is faster), the most bytes a rank sent in each mode against the least
# it must receive (`reshard bench --dry-run`, cli/receive_bound.h), each
# mode's peak bytes per rank, and whether both results were verified. A mode
# that did not run (e.g. the executor refused a step) shows "-". This is a
# measurement on whatever machine runs it, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-bench/suite.jsonl}
repeat=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")

bazel build -c opt //cli:reshard >/dev/null 2>&1 || bazel build -c opt //cli:reshard
# Not bazel-bin/: that link follows whichever configuration was built last.
reshard="$(bazel info -c opt bazel-bin 2>/dev/null)/cli/reshard"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "command: bench/run_suite.sh $suite $repeat ${extra[*]:-}"
echo
n=0
while IFS= read -r line; do
  [ -z "${line// }" ] && continue
  n=$((n + 1))
  python3 bench/case_flags.py "$line" >"$tmp/case"  # name, then the flags, one per line
  name=$(head -1 "$tmp/case")
  mapfile -t flags < <(tail -n +2 "$tmp/case")
  "$reshard" bench "${flags[@]}" "${extra[@]}" --dry-run --format json >"$tmp/bound.$n"
  set +e
  "$reshard" bench "${flags[@]}" "${extra[@]}" --modes native,pytorch --repeat "$repeat" \
    --format json >"$tmp/modes.$n" 2>"$tmp/err.$n"
  set -e
  echo "$name" >"$tmp/name.$n"
done <"$suite"

python3 - "$tmp" "$n" <<'PY'
import json, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
print("| case | native median us | pytorch median us | pytorch/native | native predicted us | pytorch predicted us | bytes sent max native / pytorch / lower bound | peak bytes native / pytorch | verified native / pytorch |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
errors, rankings, priced = [], [], set()
for i in range(1, n + 1):
    name = open(f"{tmp}/name.{i}").read().strip()
    bound = json.loads(open(f"{tmp}/bound.{i}").read())["receive_bound_max"]
    modes = {}
    for l in open(f"{tmp}/modes.{i}"):
        if l.strip():
            r = json.loads(l)
            modes[r["mode"]] = r
    nat, pyt = modes.get("native", {}), modes.get("pytorch", {})
    def med(r):
        m = r.get("measured_us", {}).get("median")
        return m if r.get("verified") else None
    def cell(v):
        return "-" if v is None else f"{v:.0f}"
    a, b = med(nat), med(pyt)
    ratio = f"{b / a:.2f}x" if a and b else "-"
    sent = f"{nat.get('bytes_sent_max', '-')} / {pyt.get('bytes_sent_max', '-')} / {bound}"
    peak = f"{nat.get('peak_bytes_max', '-')} / {pyt.get('peak_bytes_max', '-')}"
    ver = f"{'yes' if nat.get('verified') else 'NO'} / {'yes' if pyt.get('verified') else 'NO'}"
    pa, pb = nat.get("predicted_us"), pyt.get("predicted_us")
    for r in (nat, pyt):
        if r.get("cost_model"):
            priced.add(f'{r["mode"]}: {r["cost_model"]} (profile {r.get("profile")})')
    for m, p in ((a, pa), (b, pb)):
        if m and p:
            errors.append((abs(p / m - 1), name))
    # Plans that differ, measured more than 1.3x apart: does the model rank them alike?
    if a and b and pa and pb and nat.get("trace") != pyt.get("trace") and max(a, b) / min(a, b) > 1.3:
        rankings.append((name, (a < b) == (pa < pb)))
    print(f"| {name} | {cell(a)} | {cell(b)} | {ratio} | {cell(pa)} | {cell(pb)} | {sent} | {peak} | {ver} |")
    err = open(f"{tmp}/err.{i}").read().strip()
    if err:
        print(f"<!-- {name}: {err.splitlines()[0][:200]} -->")
print()
for p in sorted(priced):
    print(f"planned with: {p}")
if errors:
    e = sorted(x for x, _ in errors)
    q = lambda f: e[min(len(e) - 1, int(f * len(e)))]
    print(f"|predicted/measured - 1| over {len(e)} plans (both modes): median {100 * q(0.5):.0f}%, "
          f"25th {100 * q(0.25):.0f}%, 75th {100 * q(0.75):.0f}%, 90th {100 * q(0.9):.0f}%, "
          f"max {100 * e[-1]:.0f}%")
    print("per plan: " + ", ".join(f"{n} {100 * x:.0f}%" for x, n in errors))
ok = sum(1 for _, same in rankings if same)
print(f"plans that differ and measure > 1.3x apart: {len(rankings)}; the model ranks {ok} the same way"
      + ("" if ok == len(rankings) else
         " (not: " + ", ".join(n for n, same in rankings if not same) + ")"))
PY
