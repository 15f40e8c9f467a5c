#!/usr/bin/env python3
"""Native against pytorch mode, case by case (issue 17): where native
planning's time goes on a hard set, and what a tighter bound would buy.

For each line of CASES (a hard 4-D set, e.g. bench/data/hard4d_large.jsonl):
`reshard batch --timings` on the line repeated REPEATS times, as it is
(pytorch mode, its cost_model) and with "mode": "native" and no cost_model
(the default nccl model), and the states each search expands (`reshard plan`,
"N states expanded"). Prints one row per case, then:
  * the means and the ratio (bench/native_vs_pytorch.sh's, one case at a time),
    the medians, and the cases within 2x;
  * native time per case as a + b * expansions (least squares);
  * the ratio if every native search expanded at most N states (the measured
    time less b per state above N): what a bound that tight would give.

    python3 bench/per_case.py CASES BIN [REPEATS]     # REPEATS=30 by default
"""
import json
import re
import statistics
import subprocess
import sys


def batch_us(binary, line, repeats):
    run = subprocess.run([binary, "batch", "--timings"], input=(line + "\n") * repeats,
                         capture_output=True, text=True, check=True)
    return float(re.search(r"\(([\d.]+) us/line\)", run.stderr).group(1))


def expanded(binary, case, mode):
    flags = [binary, "plan", "--mesh", ",".join(map(str, case["mesh"])),
             "--shape", ",".join(map(str, case["shape"])), "--src", case["src"],
             "--dst", case["dst"], "--dtype", case.get("dtype", "f32"), "--mode", mode,
             "--devices-per-host", str(case.get("devices_per_host", 8))]
    if mode == "pytorch" and "cost_model" in case:
        flags += ["--cost-model", case["cost_model"]]
    out = subprocess.run(flags, capture_output=True, text=True, check=True).stdout
    return int(re.search(r"(\d+) states expanded", out).group(1))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench/per_case.py CASES BIN [REPEATS]")
    cases_path, binary = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) == 4 else 30
    rows = []
    print("id  pytorch_us  native_us  ratio  native_expanded")
    for line in open(cases_path):
        if not line.strip():
            continue
        case = json.loads(line)
        native = dict(case, mode="native")
        native.pop("cost_model", None)
        p = batch_us(binary, json.dumps(case), repeats)
        n = batch_us(binary, json.dumps(native), repeats)
        e = expanded(binary, case, "native")
        rows.append((case.get("id"), p, n, e))
        print(f"{case.get('id')}  {p:.1f}  {n:.1f}  {n / p:.2f}  {e}", flush=True)

    k = len(rows)
    p_sum = sum(r[1] for r in rows)
    n_sum = sum(r[2] for r in rows)
    print(f"\n{k} cases: pytorch {p_sum / k:.1f} us, native {n_sum / k:.1f} us per case: "
          f"{n_sum / p_sum:.2f}x")
    print(f"medians: pytorch {statistics.median(r[1] for r in rows):.1f} us, native "
          f"{statistics.median(r[2] for r in rows):.1f} us; median ratio "
          f"{statistics.median(r[2] / r[1] for r in rows):.2f}x; "
          f"{sum(r[2] <= 2 * r[1] for r in rows)} cases within 2x")
    xs, ys = [r[3] for r in rows], [r[2] for r in rows]
    mx, my = sum(xs) / k, sum(ys) / k
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    print(f"native us per case = {a:.1f} + {b:.2f} x expanded states "
          f"({sum(xs)} expanded in all, median {statistics.median(xs)})")
    for cap in (10, 20, 50, 100):
        capped = sum(n - b * max(0, e - cap) for _, _, n, e in rows)
        print(f"every search at most {cap} states: native {capped / k:.1f} us per case, "
              f"{capped / p_sum:.2f}x")


if __name__ == "__main__":
    main()
