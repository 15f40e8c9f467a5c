#!/usr/bin/env bash
# The redistribution suite (bench/suite.jsonl): `reshard bench --format json`
# on every case, both modes side by side in one run, as a markdown table.
#
#   bench/run_suite.sh [suite.jsonl] [repeat] [extra reshard bench flags...]
#   bench/run_suite.sh bench/suite.jsonl 7 --profile bench/profiles/gloo-loopback.json
#
# Columns: each mode's measured median (microseconds, the slowest rank's
# Redistribute per round, interleaved rounds), pytorch/native ratio (> 1:
# native is faster), the same round by round (the median of the rounds'
# ratios, how many rounds native won, and a two-sided sign test: "measurably
# slower" below means native lost most rounds with p < 0.05), the most bytes a rank sent in each mode against the least
# it must receive (`reshard bench --dry-run`, harness/receive_bound.h), each
# mode's peak bytes per rank, and whether both results were verified. A mode
# that did not run (e.g. the executor refused a step) shows "-". This is a
# measurement on whatever machine runs it, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-bench/suite.jsonl}
repeat=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")

source bench/opt_reshard.sh
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
import json, math, os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
# Round by round (the modes ran in the same interleaved rounds): the median of
# pytorch/native per round, and a two-sided sign test over the rounds (as
# reshard bench's text output, harness/paired_rounds.h).
def paired(nat, pyt):
    a = nat.get("measured_us", {}).get("rounds") or []
    b = pyt.get("measured_us", {}).get("rounds") or []
    n = min(len(a), len(b))
    if n == 0 or not (nat.get("verified") and pyt.get("verified")):
        return None
    ratios = sorted(b[r] / a[r] for r in range(n) if a[r] > 0)
    faster = sum(1 for r in range(n) if a[r] < b[r])
    untied = sum(1 for r in range(n) if a[r] != b[r])
    tail = sum(math.comb(untied, k) for k in range(min(faster, untied - faster) + 1))
    p = min(1.0, 2 * tail / 2 ** untied) if untied else 1.0
    mid = (ratios[(len(ratios) - 1) // 2] + ratios[len(ratios) // 2]) / 2
    return mid, faster, n, p

print("| case | native median us | pytorch median us | pytorch/native | per round: pytorch/native, native faster (sign test p) | native predicted us | pytorch predicted us | bytes sent max native / pytorch / lower bound | peak bytes native / pytorch | verified native / pytorch |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
errors, rankings, priced, slower = [], [], set(), []
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
    # Plans differ when their states or their steps do: one trace can be an
    # exchange or an all_gather, and the machine model then prices them apart.
    differ = nat.get("trace") != pyt.get("trace") or pa != pb
    # Plans that differ, measured more than 1.3x apart: does the model rank them alike?
    if a and b and pa and pb and differ and max(a, b) / min(a, b) > 1.3:
        rankings.append((name, (a < b) == (pa < pb)))
    pr = paired(nat, pyt)
    per_round = "-" if pr is None else f"{pr[0]:.2f}x, {pr[1]} of {pr[2]} (p = {pr[3]:.2g})"
    # Measurably slower: native lost most rounds, and the sign test says it is no coin flip.
    if pr and differ and 2 * pr[1] < pr[2] and pr[3] < 0.05:
        slower.append(f"{name} ({per_round})")
    print(f"| {name} | {cell(a)} | {cell(b)} | {ratio} | {per_round} | {cell(pa)} | {cell(pb)} | {sent} | {peak} | {ver} |")
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
print("plans that differ where native is measurably slower (lost most rounds, sign test p < 0.05): "
      + (", ".join(slower) if slower else "none"))
ok = sum(1 for _, same in rankings if same)
print(f"plans that differ and measure > 1.3x apart: {len(rankings)}; the model ranks {ok} the same way"
      + ("" if ok == len(rankings) else
         " (not: " + ", ".join(n for n, same in rankings if not same) + ")"))
PY
