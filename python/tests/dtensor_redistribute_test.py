"""reshard.torch.redistribute against DTensor.redistribute, on 4 and on 8 gloo processes.

Each world size runs CASES random cases in one spawn (the processes loop
over them). A case draws a mesh of that many ranks (1-3 mesh dims, size-1
dims included), a global shape of 1-3 dims (uneven sizes, sometimes a 0),
a dtype, a source layout (Shard, Replicate, Partial of one reduce op; shard
orders written as a DTensorSpec shard_order or as _StridedShard placements)
and a destination (written as torch placements with a shard_order, as
_StridedShard placements or as notation text), and redistributes it in
native and in pytorch mode. The source DTensor is built from local_shard's
blocks and checked first: torch's own full_tensor() must give the global
tensor back. Then, per mode:

* destination without Partial: the local tensor is bit for bit the one of
  dtensor.redistribute(mesh, placements) (placements with _StridedShard
  where the order is not the default; where torch would skip the call
  because only the order changes, torch's redistribute_local_tensor with
  the destination spec), with the same dtype and shape;
* destination with Partial: full_tensor() is exactly the global tensor
  (its values are integers, so every reduction order gives them exactly) and
  equals torch's own redistribution of it where torch runs that move
  (redistribute_local_tensor: DTensor.redistribute refuses Partial targets);
* always: the result carries the destination placements and shard order.

Partial sources hold integer values in every dtype; others random values.
"""

import json
import logging
import os
import random
import tempfile
import unittest

try:
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, ShardOrderEntry, TensorMeta
    from torch.distributed.tensor._redistribute import redistribute_local_tensor
    from torch.distributed.tensor.placement_types import _StridedShard

    import gloo_processes
    import reshard.torch as rt
    SKIP = None
except ImportError as e:  # scripts/test reports the tests as skipped
    SKIP = f"torch with DTensor shard orders is not importable: {e}"

CASES = int(os.environ.get("RESHARD_DTENSOR_CASES", 500))
MESHES = {4: [(4,), (2, 2), (1, 4), (2, 1, 2)], 8: [(8,), (2, 4), (4, 2), (2, 2, 2), (1, 2, 4)]}
OPS = ["sum", "avg", "max", "min", "product"]
DTYPES = ["float32", "float32", "float64", "bfloat16", "float16", "int64", "int32", "int8"]
SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16]



class Case:
    """One random case, the same on every rank (drawn from the same seed)."""

    def __init__(self, rng, index, meshes):
        self.index = index
        self.mesh_shape = rng.choice(meshes)
        n = len(self.mesh_shape)
        ndim = rng.randint(1, 3)
        self.shape = [rng.choice(SIZES) for _ in range(ndim)]
        if rng.random() < 0.03:
            self.shape[rng.randrange(ndim)] = 0
        self.dtype = rng.choice(DTYPES)
        floating = self.dtype.startswith(("float", "bfloat"))
        self.op = rng.choice([op for op in OPS if floating or op != "avg"])
        self.src = [self._placement(rng, ndim, partial=0.25) for _ in range(n)]
        self.dst = []
        for p in self.src:  # Partial targets only where torch can make them: R, or the same P
            may = isinstance(p, (Replicate, Partial)) and self.op != "product"
            self.dst.append(Partial(self.op) if (isinstance(p, Partial) and rng.random() < 0.3)
                            or (may and rng.random() < 0.15) else self._placement(rng, ndim, 0))
        self.src_order = self._order(rng, self.src)
        self.dst_order = self._order(rng, self.dst)
        self.src_strided = rng.random() < 0.5
        self.dst_form = rng.choice(["entries", "pairs", "strided", "strided", "text"])
        self.seed = rng.randrange(1 << 30)

    def _placement(self, rng, ndim, partial):
        if rng.random() < partial:
            return Partial(self.op)
        return Shard(rng.randrange(ndim)) if rng.random() < 0.65 else Replicate()

    @staticmethod
    def _order(rng, placements):
        order = {}
        for m, p in enumerate(placements):
            if isinstance(p, Shard):
                order.setdefault(p.dim, []).append(m)
        for dims in order.values():
            rng.shuffle(dims)
        return tuple(ShardOrderEntry(tensor_dim=d, mesh_dims=tuple(order[d])) for d in sorted(order))

    def __str__(self):
        return (f"case {self.index}: mesh {list(self.mesh_shape)} shape {self.shape} {self.dtype} "
                f"{DTensorSpec.format_shard_order_str(tuple(self.src), self.src_order)} -> "
                f"{DTensorSpec.format_shard_order_str(tuple(self.dst), self.dst_order)} "
                f"(src {'strided' if self.src_strided else 'shard_order'}, dst {self.dst_form})")


def _strided(mesh, placements, order):
    return DTensorSpec._convert_shard_order_to_StridedShard(order, tuple(placements), mesh)


def _full(case):
    g = torch.Generator().manual_seed(case.seed)
    dtype = getattr(torch, case.dtype)
    if any(isinstance(p, Partial) for p in case.src) or not dtype.is_floating_point:
        return torch.randint(-4, 5, case.shape, generator=g).to(dtype)
    return torch.randn(case.shape, generator=g).to(dtype)


def _source(case, mesh, full, rank):
    local = rt.local_shard(full, list(case.mesh_shape), _notation(case.src, case.src_order), rank)
    meta = TensorMeta(full.shape, full.stride(), full.dtype)
    if case.src_strided:
        spec = DTensorSpec(mesh, _strided(mesh, case.src, case.src_order), tensor_meta=meta)
    else:
        spec = DTensorSpec(mesh, tuple(case.src), tensor_meta=meta, shard_order=case.src_order)
    return DTensor(local, spec, requires_grad=False)


def _notation(placements, order):
    import reshard
    return reshard.notation(list(placements), order)


def _destination(case, mesh):
    """(placements, shard_order) as the case passes them to reshard.torch.redistribute."""
    if case.dst_form == "strided":
        return _strided(mesh, case.dst, case.dst_order), None
    if case.dst_form == "text":
        return _notation(case.dst, case.dst_order), None
    if case.dst_form == "pairs":
        return list(case.dst), [(e.tensor_dim, list(e.mesh_dims)) for e in case.dst_order]
    return list(case.dst), case.dst_order


def _bits(t):
    """A tensor whose equality is bit equality of `t`."""
    if t.dtype.is_floating_point:
        return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[t.element_size()])
    return t


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


def _torch_reference(case, mesh, src):
    """torch's redistribution of src to the destination (None where torch refuses it)."""
    meta = src._spec.tensor_meta
    dst_spec = DTensorSpec(mesh, tuple(case.dst), tensor_meta=meta, shard_order=case.dst_order)
    strided = _strided(mesh, case.dst, case.dst_order)
    partial = any(isinstance(p, Partial) for p in case.dst)
    if not partial and tuple(src.placements) != tuple(strided):
        return src.redistribute(mesh, strided)
    try:
        local = redistribute_local_tensor(src._local_tensor, src._spec, dst_spec)
    except (RuntimeError, ValueError, AssertionError):
        return None
    return DTensor(local, dst_spec, requires_grad=False)


def _check(case, mesh, full, src, mode, ref, stats):
    """Failures of reshard.torch.redistribute in `mode` on this case."""
    placements, order = _destination(case, mesh)
    try:
        out = rt.redistribute(src, placements, shard_order=order, mode=mode)
    except Exception as e:  # ranks fail alike, so none hangs
        return [f"{case} {mode}: {type(e).__name__}: {e}"]
    problems = []
    want_placements = tuple(_strided(mesh, case.dst, case.dst_order)) if case.dst_form == "strided" \
        else tuple(case.dst)
    if tuple(out.placements) != want_placements:
        problems.append(f"placements {out.placements}, want {want_placements}")
    if case.dst_form != "strided" and out._spec.shard_order != case.dst_order:
        problems.append(f"shard_order {out._spec.shard_order}, want {case.dst_order}")
    if not any(isinstance(p, Partial) for p in case.dst):
        if not _same(out.to_local(), ref.to_local()):
            problems.append(f"local {out.to_local().tolist()}, DTensor.redistribute gives "
                            f"{ref.to_local().tolist()}")
        stats["bitwise"] += 1
    else:
        got = out.full_tensor()
        if not _same(got, full):
            problems.append(f"full_tensor {got.tolist()}, want {full.tolist()}")
        if ref is not None and ref.to_local().dtype == full.dtype:
            if not _same(got, ref.full_tensor()):
                problems.append(f"full_tensor {got.tolist()}, torch's {ref.full_tensor().tolist()}")
            stats["partial_vs_torch"] += 1
        stats["partial"] += 1
    if not problems and case.index % 7 == 0:  # torch reads the result as well as it reads its own
        if not _same(out.full_tensor(), full):
            problems.append("full_tensor of the result is not the global tensor")
    return [f"{case} {mode}: {p}" for p in problems]


def _worker(rank, world, out_dir):
    logging.getLogger("torch.distributed.tensor._redistribute").setLevel(logging.ERROR)
    meshes = {shape: init_device_mesh("cpu", shape) for shape in MESHES[world]}
    rng = random.Random(4100 + world)
    failures, stats = [], {"bitwise": 0, "partial": 0, "partial_vs_torch": 0, "strided_src": 0,
                           "orders": 0, "uneven": 0, "empty": 0, "ops": [], "steps": []}
    for index in range(CASES):
        case = Case(rng, index, MESHES[world])
        mesh = meshes[case.mesh_shape]
        try:
            full = _full(case)
            src = _source(case, mesh, full, rank)
            if not _same(src.full_tensor(), full):
                failures.append(f"{case}: the source DTensor is not the global tensor")
                continue
            ref = _torch_reference(case, mesh, src)
            for mode in ("native", "pytorch"):
                failures += _check(case, mesh, full, src, mode, ref, stats)
            _count(case, mesh, src, stats)
        except Exception as e:  # the case is reported; ranks fail alike, so none hangs
            failures.append(f"{case}: {type(e).__name__}: {e}")
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
        json.dump({"failures": failures, "stats": stats}, f)


def _count(case, mesh, src, stats):
    stats["strided_src"] += any(isinstance(p, _StridedShard) for p in src.placements)
    stats["orders"] += any(list(e.mesh_dims) != sorted(e.mesh_dims)
                           for e in case.src_order + case.dst_order)
    stats["uneven"] += any(isinstance(p, Shard) and case.shape[p.dim] % case.mesh_shape[m]
                           for layout in (case.src, case.dst) for m, p in enumerate(layout))
    stats["empty"] += 0 in case.shape
    if any(isinstance(p, Partial) for p in case.src + case.dst):
        stats["ops"].append(case.op)
    if 0 not in case.shape:
        for mode in ("native", "pytorch"):
            placements, order = _destination(case, mesh)
            for step in rt.plan(src, placements, shard_order=order, mode=mode).steps:
                stats["steps"].append(f"{mode} {step.collective} {len(step.mesh_dims)}")


def _run(world):
    with tempfile.TemporaryDirectory() as out_dir:
        gloo_processes.run(_worker, world, world, out_dir)
        results = []
        for rank in range(world):
            with open(os.path.join(out_dir, f"{rank}.json")) as f:
                results.append(json.load(f))
    return results


@unittest.skipIf(SKIP, SKIP)
class DTensorRedistributeOnFourGlooProcesses(unittest.TestCase):
    WORLD = 4

    @classmethod
    def setUpClass(cls):
        cls.results = _run(cls.WORLD)

    def test_every_case_equals_dtensor_redistribute(self):
        failures = [f for r in self.results for f in r["failures"]]
        self.assertEqual(failures, [], "\n".join(failures[:20]))

    def test_cases_cover_what_the_issue_asks(self):
        s = self.results[0]["stats"]
        self.assertGreaterEqual(s["bitwise"] + s["partial"], 2 * CASES - 40)
        for key in ("partial", "partial_vs_torch", "strided_src", "orders", "uneven", "empty"):
            self.assertGreater(s[key], 0, key)
        self.assertEqual(set(s["ops"]), set(OPS))
        steps = set(s["steps"])
        for kind in ("all_gather", "all_to_all", "all_reduce", "reduce_scatter", "chunk",
                     "partition"):
            self.assertIn(f"pytorch {kind} 1", steps)
        self.assertTrue(any(k.startswith("native permute") for k in steps), steps)
        self.assertTrue(any(k.startswith("native") and not k.endswith(" 1") and "permute" not in k
                            for k in steps), steps)


class DTensorRedistributeOnEightGlooProcesses(DTensorRedistributeOnFourGlooProcesses):
    WORLD = 8


if __name__ == "__main__":
    unittest.main()
