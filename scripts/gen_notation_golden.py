#!/usr/bin/env python3
"""Generates notation_golden.txt from the oracle's parse_state (spec §3).

Run by hand, never at test time:
  python3 scripts/gen_notation_golden.py /work/shared/oracle/refplanner.py \
      > tests/testdata/notation_golden.txt

Each line: mesh_ndim <TAB> tensor_ndim <TAB> input <TAB> oracle's canonical text.
Inputs are valid for our stricter parser too: Partial ops are one op or {sum, avg},
and [k] is on all or none of the tokens of a multiply-sharded tensor dim.
"""
import importlib.util
import random
import sys

spec = importlib.util.spec_from_file_location("refplanner", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)

rng = random.Random(20240611)
OPS = ["sum", "avg", "max", "min", "prod"]


def make_case():
    mesh_ndim = rng.randint(1, 5)
    tensor_ndim = rng.randint(1, 4)
    kinds = [rng.choice("SSSRRP") for _ in range(mesh_ndim)]
    ops_pool = rng.choice([["sum"], ["sum", "avg"], [rng.choice(OPS)]])
    dims = [rng.randrange(tensor_ndim) for _ in range(mesh_ndim)]
    with_index = rng.random() < 0.6
    # [k] permutation per tensor dim, given on every token of that dim or none.
    perm = {}
    for d in set(dims[m] for m in range(mesh_ndim) if kinds[m] == "S"):
        ms = [m for m in range(mesh_ndim) if kinds[m] == "S" and dims[m] == d]
        ks = list(range(len(ms)))
        rng.shuffle(ks)
        if len(ms) > 1 and with_index:
            perm.update(zip(ms, ks))
    toks = []
    for m in range(mesh_ndim):
        if kinds[m] == "S":
            d = dims[m]
            if rng.random() < 0.3:
                d -= tensor_ndim  # negative dims are normalised
            t = f"S({d})" if rng.random() < 0.8 else f"S( {d} )"
            if m in perm:
                t += f"[{perm[m]}]"
        elif kinds[m] == "R":
            t = "R"
        else:
            op = rng.choice(ops_pool)
            t = "P" if op == "sum" and rng.random() < 0.4 else f"P({op})"
        toks.append(t)
    sep = rng.choice(["", "", ",", ", ", " "])
    text = sep.join(toks)
    if rng.random() < 0.2:
        text = "  " + text + " "
    # The oracle's regex allows no spaces inside parentheses; ours does.
    pl, order = ref.parse_state(text.replace("( ", "(").replace(" )", ")"), tensor_ndim)
    return mesh_ndim, tensor_ndim, text, ref.fmt(pl, order)


seen = set()
while len(seen) < 400:
    case = make_case()
    if case[2] in seen:
        continue
    seen.add(case[2])
    print("\t".join(str(x) for x in case))
