#!/usr/bin/env python3
"""One suite line (bench/suite.jsonl, bench/cross_mesh_suite.jsonl) as
`reshard bench` flags: prints the case's name, then one flag or value per
line (mesh, shape, dtype, src, dst; dst_mesh, src_ranks, dst_ranks where the
line has them). Used by bench/run_suite.sh, run_cross_mesh_suite.sh and
bytes_vs_bound.sh.

    python3 bench/case_flags.py '{"name": "x", "mesh": [8], ...}'
"""
import json
import sys

case = json.loads(sys.argv[1])
print(case["name"])
for key in ("mesh", "shape", "dst_mesh", "src_ranks", "dst_ranks"):
    if key in case:
        print("--" + key.replace("_", "-"))
        print(",".join(str(x) for x in case[key]))
for key in ("dtype", "src", "dst"):
    print("--" + key)
    print(case[key])
