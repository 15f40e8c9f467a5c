#!/usr/bin/env python3
"""Hard 4-D graph-planner cases (4-D meshes, 4-D tensors, random shard orders and Partials)
for bench/compare_oracle.sh. Usage: gen_hard_cases.py COUNT [SEED] [large|harder] > cases.jsonl

Default: meshes 2x2x2x2 up to 2x4x2x4, tensors of up to 64 per dim (bench/data/hard4d.jsonl).
`large` (issue 17): every mesh dim 2, 4 or 8 (up to 8x8x8x8 = 4096 ranks) and tensors of
8 to 4096 per dim, up to about 512 MB, where the bytes term of the cost dominates
(bench/data/hard4d_large.jsonl).
`harder` (a check on cases nothing was tuned on): mesh dims 2, 3, 4, 6, 8 or 16 (at most
8192 ranks), uneven extents 3 to 8191, tensors up to 2 GB."""
import json, random, sys
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
n = int(sys.argv[1])
def state(mesh, nd, ops):
    toks = []
    for m in range(len(mesh)):
        r = rng.random()
        if r < 0.6: toks.append(('S', rng.randrange(nd)))
        elif r < 0.8: toks.append(('R',))
        else: toks.append(('P', ops))
    # shard order: random permutation per tensor dim
    by = {}
    for m, t in enumerate(toks):
        if t[0] == 'S': by.setdefault(t[1], []).append(m)
    pos = {}
    for d, ms in by.items():
        perm = ms[:]; rng.shuffle(perm)
        for i, m in enumerate(perm): pos[m] = i
    out = ''
    for m, t in enumerate(toks):
        if t[0] == 'S':
            out += f"S({t[1]})" + (f"[{pos[m]}]" if len(by[t[1]]) > 1 else '')
        elif t[0] == 'R': out += 'R'
        else: out += f"P({t[1]})"
    return out
variant = sys.argv[3] if len(sys.argv) > 3 else ''
large = variant in ('large', 'harder')
ITEMSIZE = dict(f32=4, bf16=2, f64=8)
def harder_case():
    while True:  # redraw until at most 8192 ranks
        mesh = [rng.choice([2,3,4,6,8,16]) for _ in range(4)]
        if mesh[0] * mesh[1] * mesh[2] * mesh[3] <= 8192: break
    dtype = rng.choice(['f32','bf16','f64'])
    while True:  # redraw until the tensor is at most 2 GB
        shape = [rng.choice([3,17,96,255,999,1536,2047,4097,8191]) for _ in range(4)]
        numel = shape[0] * shape[1] * shape[2] * shape[3]
        if numel * ITEMSIZE[dtype] <= 2 << 30: return mesh, shape, dtype
def large_case():
    mesh = [rng.choice([2,4,8]) for _ in range(4)]
    dtype = rng.choice(['f32','bf16','f64'])
    while True:  # redraw until the tensor is at most 512 MB
        shape = [rng.choice([8,13,31,64,127,256,1000,1024,4096]) for _ in range(4)]
        numel = shape[0] * shape[1] * shape[2] * shape[3]
        if numel * ITEMSIZE[dtype] <= 512 << 20: return mesh, shape, dtype
for i in range(n):
    if variant == 'harder':
        mesh, shape, dtype = harder_case()
    elif large:
        mesh, shape, dtype = large_case()
    else:
        mesh = rng.choice([[2,2,2,2],[2,2,2,4],[4,2,2,2],[2,4,2,4],[3,2,2,2]])
        shape = [rng.choice([8,12,13,16,31,64]) for _ in range(4)]
        dtype = None
    op = rng.choice(['sum','avg','max','min'])
    print(json.dumps(dict(id=f"hard-{i}", mesh=mesh, shape=shape, dtype=dtype or rng.choice(['f32','bf16','f64']),
        src=state(mesh,4,op), dst=state(mesh,4,op), algorithm='graph', cost_model=rng.choice(['pytorch','pytorch-const']),
        devices_per_host=rng.choice([4,8]), coordinate=[rng.randrange(s) for s in mesh])))
