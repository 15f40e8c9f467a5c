"""reshard.cost from Python: first-call and cached calls per second (bench/README.md).

    python3 -m pip install ./python                       # reshard in this environment
    python3 bench/python_cost.py [--oracle ../shared/oracle/refplanner.py] [--rounds 20]

Cases: the parity cases that have a plan (tests/testdata/pytorch-tests.jsonl
and examples.jsonl, pytorch mode as the oracle plans them). Prints
  first call: each case once in this fresh process (the C++ plan cache cold)
  cached:     every case again, `rounds` times (the Python cost cache hit)
  C++ cache:  the same calls past the Python cache (reshard._reshard.cost)
  oracle:     the reference planner's plan_case per case (it caches nothing),
              when --oracle names it; PyTorch 1.13 has no DTensor planner.
"""

import argparse
import importlib.util
import json
import os
import time

import reshard
from reshard import _reshard

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def cases():
    out = []
    for name in ("pytorch-tests.jsonl", "examples.jsonl"):
        with open(os.path.join(ROOT, "tests", "testdata", name)) as f:
            for line in f:
                c = json.loads(line)
                if not c["expected"]["ok"]:
                    continue
                c.pop("expected")
                c.pop("id")
                c.setdefault("mode", "pytorch")
                out.append(c)
    return out


def timed(fn, items, rounds=1):
    """(wall seconds, CPU seconds of this process) per call: the machine is shared, and
    CPU time is what a call costs when other processes take the cores."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for item in items:
            fn(item)
    n = rounds * len(items)
    return (time.perf_counter() - wall) / n, (time.process_time() - cpu) / n


def show(name, t):
    wall, cpu = t
    print(f"{name:12} wall {wall * 1e6:9.2f} us/call {1 / wall:11,.0f} calls/s"
          f"   CPU {cpu * 1e6:9.2f} us/call {1 / cpu:11,.0f} calls/s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--oracle")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    requests = cases()
    first = timed(lambda c: reshard.cost(**c), requests)
    cached = timed(lambda c: reshard.cost(**c), requests, args.rounds)
    cpp = timed(lambda c: _reshard.cost(c), requests, max(1, args.rounds // 4))
    print(f"{len(requests)} cases")
    show("first call:", first)
    show("cached:", cached)
    show("C++ cache:", cpp)
    if args.oracle:
        spec = importlib.util.spec_from_file_location("refplanner", args.oracle)
        oracle = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(oracle)
        ref = timed(oracle.plan_case, requests)
        show("oracle:", ref)
        print(f"cached reshard.cost vs the oracle: {ref[0] / cached[0]:,.0f}x (wall), "
              f"{ref[1] / cached[1]:,.0f}x (CPU)")

if __name__ == "__main__":
    main()
