#!/usr/bin/env python3
"""Generates tests/testdata/golden.jsonl: random planning cases answered by the oracle.

Run by hand (tests never call the oracle; they read the committed data):

    python3 scripts/gen_golden.py                      # writes tests/testdata/golden.jsonl
    python3 scripts/gen_golden.py --copy-shared        # also refreshes the copies of
                                                       # ../shared/cases/*.jsonl

Every case is valid input for reshard (the oracle does not validate, so the generator only
produces what the spec accepts) and carries the oracle's answer under "expected", in the
format of ../shared/cases/examples.jsonl. Cases cover 1-D to 4-D meshes (sizes 1, 2, 3, 4, 8),
1-D to 4-D tensors with uneven sizes, every dtype (short and long names), both cost models,
devices_per_host 1/4/8, random coordinates, every algorithm, explicit shard orders ([k]),
StridedShard input (_S), every Partial op and sum+avg mixes.

Two translations keep the oracle's answers in our terms:
* StridedShard: the oracle does not read `_S(d, sf)`. The generator decodes it (spec §7) into
  `[k]` notation for the oracle and asks for the graph planner, which spec §9 prescribes for
  StridedShard input.
* No plan: the oracle's greedy planner fails with a KeyError such as "('S', 'P')" when a step
  would need S->P or P(x)->P(y); that is recorded as error "no_path", as in examples.jsonl.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ORACLE = os.path.join(REPO, '..', 'shared', 'oracle', 'refplanner.py')
DEFAULT_SHARED_CASES = os.path.join(REPO, '..', 'shared', 'cases')
OUT_DIR = os.path.join(REPO, 'tests', 'testdata')

MESH_SIZES = [1, 2, 3, 4, 8]
TENSOR_SIZES = [1, 2, 3, 5, 7, 12, 13, 31, 64, 100, 1024]
DTYPES = ['f64', 'f32', 'f16', 'bf16', 'i64', 'i32', 'i16', 'i8', 'u8', 'bool',
          'float32', 'bfloat16', 'int64', 'float16', 'uint8']
OPS = ['sum', 'avg', 'max', 'min', 'prod']
# The Partial op sets one state may hold (spec §4: one op, or exactly {sum, avg}).
OP_SETS = [['sum'], ['avg'], ['max'], ['min'], ['prod'], ['sum', 'avg']]


def random_state(rng, mesh, ndim):
    """Random placements and shard order: (placements, {tensor_dim: [mesh dims in order]})."""
    ops = rng.choice(OP_SETS)
    kinds = rng.choice([['R', 'S'], ['R', 'S', 'P'], ['S'], ['R', 'P'], ['S', 'P']])
    pl = []
    for _ in mesh:
        k = rng.choice(kinds)
        if k == 'R':
            pl.append(('R',))
        elif k == 'S':
            pl.append(('S', rng.randrange(ndim)))
        else:
            pl.append(('P', rng.choice(ops)))
    order = {}
    for m, p in enumerate(pl):
        if p[0] == 'S':
            order.setdefault(p[1], []).append(m)
    for d in order:
        if len(order[d]) > 1 and rng.random() < 0.5:
            rng.shuffle(order[d])
    return pl, order


def fmt_token(p, ndim, rng):
    if p[0] == 'R':
        return 'R'
    if p[0] == 'S':
        d = p[1]
        if rng.random() < 0.1:
            d -= ndim  # negative dims are normalised (spec §1)
        return 'S(%d)' % d
    if p[1] == 'sum' and rng.random() < 0.3:
        return 'P'  # bare P means P(sum) (spec §3)
    return 'P(%s)' % p[1]


def fmt_state(pl, order, ndim, rng, explicit):
    """Notation with [k] on every multiply-sharded dim when `explicit` or the order is not
    ascending; sometimes with "," or " " separators (spec §3 accepts both on input)."""
    sep = rng.choice(['', '', '', ',', ' ', ', '])
    toks = []
    for m, p in enumerate(pl):
        t = fmt_token(p, ndim, rng)
        if p[0] == 'S':
            o = order[p[1]]
            if len(o) > 1 and (explicit or o != sorted(o)):
                t += '[%d]' % o.index(m)
        toks.append(t)
    return sep.join(toks)


def force_reordered_shards(rng, mesh, ndim, pl):
    """Makes two or more mesh dims shard one tensor dim in a non-ascending order, which is
    what StridedShard expresses."""
    pl = list(pl)
    d = rng.randrange(ndim)
    dims = sorted(rng.sample(range(len(mesh)), rng.randint(2, len(mesh))))
    for m in dims:
        pl[m] = ('S', d)
    order = {}
    for m, p in enumerate(pl):
        if p[0] == 'S':
            order.setdefault(p[1], []).append(m)
    while order[d] == sorted(order[d]):
        rng.shuffle(order[d])
    return pl, order


def encode_strided(pl, order, mesh):
    """Spec §7 encode: `_S(d, sf)` with sf = product of the sizes of the mesh dims before this
    one in d's order that are greater than it; sf 1 prints as a plain S(d)."""
    toks = []
    for m, p in enumerate(pl):
        if p[0] != 'S':
            toks.append('R' if p[0] == 'R' else 'P(%s)' % p[1])
            continue
        o = order[p[1]]
        sf = 1
        for k in o[:o.index(m)]:
            if k > m:
                sf *= mesh[k]
        toks.append('S(%d)' % p[1] if sf == 1 else '_S(%d, %d)' % (p[1], sf))
    return ''.join(toks)


def decode_strided(tokens, mesh):
    """Spec §7 decode. tokens: per mesh dim ('S', d, sf) | other. Returns {d: order} or None."""
    order = {}
    for m in reversed(range(len(mesh))):
        t = tokens[m]
        if t[0] != 'S':
            continue
        d, sf = t[1], t[2]
        lst = order.setdefault(d, [])
        for i in range(len(lst) + 1):
            prod = 1
            for k in lst[:i]:
                prod *= mesh[k]
            if prod == sf:
                lst.insert(i, m)
                break
        else:
            return None
    return order


def strided_case(rng, mesh, pl, order):
    """Returns (our_text, oracle_text) for a StridedShard input, or None when the encoding does
    not decode back to the same order (size-1 mesh dims make it ambiguous)."""
    text = encode_strided(pl, order, mesh)
    if '_S' not in text:
        return None
    tokens = []
    for m, p in enumerate(pl):
        if p[0] == 'S':
            o = order[p[1]]
            sf = 1
            for k in o[:o.index(m)]:
                if k > m:
                    sf *= mesh[k]
            tokens.append(('S', p[1], sf))
        else:
            tokens.append(p)
    decoded = decode_strided(tokens, mesh)
    if decoded is None or any(decoded.get(d) != o for d, o in order.items()):
        return None
    return text, fmt_state(pl, order, 0, random.Random(0), explicit=True)


def make_case(rng, idx, shape_ndim_cap=4, mesh_ndim_cap=4):
    mesh_ndim = rng.randint(1, mesh_ndim_cap)
    ndim = rng.randint(1, shape_ndim_cap)
    mesh = [rng.choice(MESH_SIZES) for _ in range(mesh_ndim)]
    shape = [rng.choice(TENSOR_SIZES) for _ in range(ndim)]
    src_pl, src_order = random_state(rng, mesh, ndim)
    dst_pl, dst_order = random_state(rng, mesh, ndim)
    case = {'id': 'g-%d' % idx, 'mesh': mesh, 'shape': shape}
    oracle = dict(case)
    if rng.random() < 0.9:
        case['dtype'] = oracle['dtype'] = rng.choice(DTYPES)
    algorithm = rng.choice(['auto', 'graph', 'greedy', None])
    if algorithm is not None:
        case['algorithm'] = oracle['algorithm'] = algorithm
    if rng.random() < 0.9:
        case['cost_model'] = oracle['cost_model'] = rng.choice(['pytorch', 'pytorch-const'])
    if rng.random() < 0.8:
        case['devices_per_host'] = oracle['devices_per_host'] = rng.choice([1, 4, 8])
    if rng.random() < 0.8:
        case['coordinate'] = oracle['coordinate'] = [rng.randrange(n) for n in mesh]

    texts = {}
    for side, pl, order in (('src', src_pl, src_order), ('dst', dst_pl, dst_order)):
        explicit = rng.random() < 0.2
        if side == 'src' and rng.random() < 0.15 and len(mesh) >= 2:
            pl, order = force_reordered_shards(rng, mesh, ndim, pl)
            s = strided_case(rng, mesh, pl, order)
            if s is not None:
                case['src'], oracle['src'] = s
                oracle['algorithm'] = 'graph'  # spec §9: StridedShard input uses the graph planner
                continue
        text = fmt_state(pl, order, ndim, rng, explicit)
        case[side] = oracle[side] = text
    return case, oracle


def run_oracle(oracle_path, cases):
    inp = ''.join(json.dumps(c) + '\n' for c in cases)
    out = subprocess.run([sys.executable, oracle_path, 'batch'], input=inp, capture_output=True,
                         text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--oracle', default=DEFAULT_ORACLE)
    ap.add_argument('--shared-cases', default=DEFAULT_SHARED_CASES)
    ap.add_argument('--count', type=int, default=400)
    ap.add_argument('--seed', type=int, default=20240602)
    ap.add_argument('--copy-shared', action='store_true',
                    help='also copy pytorch-tests.jsonl and examples.jsonl into tests/testdata')
    args = ap.parse_args()

    rng = random.Random(args.seed)
    ours, theirs = [], []
    for i in range(args.count):
        # A quarter of the cases are 4-D meshes with 3-D or 4-D tensors (the hard graph cases).
        c, o = make_case(rng, i + 1)
        ours.append(c)
        theirs.append(o)
    results = run_oracle(args.oracle, theirs)
    assert len(results) == len(ours)

    kept = 0
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, 'golden.jsonl'), 'w') as f:
        for case, res in zip(ours, results):
            if not res['ok']:
                err = res['error']
                if err in ("('S', 'P')", "('P', 'P')"):
                    res = {'id': case['id'], 'ok': False, 'error': 'no_path'}
                else:
                    print('skipping %s: oracle error %r' % (case['id'], err), file=sys.stderr)
                    continue
            case['expected'] = res
            f.write(json.dumps(case) + '\n')
            kept += 1
    print('wrote %d cases to %s' % (kept, os.path.join(OUT_DIR, 'golden.jsonl')), file=sys.stderr)

    if args.copy_shared:
        for name in ('pytorch-tests.jsonl', 'examples.jsonl'):
            shutil.copyfile(os.path.join(args.shared_cases, name), os.path.join(OUT_DIR, name))
            print('copied %s' % name, file=sys.stderr)


if __name__ == '__main__':
    main()
