"""reshard.torch where ranks used to die or hang (issue 44), on 4 gloo processes.

* every piece of a step's group empty (mesh [2,2], shape [2,1], S(0)S(1) -> RS(1)):
  the ranks of such a group issue no collective, and every rank gets DTensor's result;
* dtypes: bf16 moves and reduces as DTensor does; int16, which gloo lacks, moves as
  float16 bits and a reduction of it is refused on every rank with a message saying
  what to do; a backend's "Invalid scalar type" becomes such a message;
* a dim of size 0: redistributed like torch, no plan needed;
* ranks asking for different redistributions, or holding a wrong local shape:
  every rank raises ValueError naming who asked what, and the next call works.
"""

import json
import logging
import os
import tempfile
import unittest

try:
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    import gloo_processes
    import reshard.torch as rt
    SKIP = None
except ImportError as e:  # scripts/test reports the tests as skipped
    SKIP = f"torch with DTensor is not importable: {e}"

WORLD = 4


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def _empty_groups_skip_their_collective(rank, meshes):
    calls = []
    real = rt._torch_steps.ALL_GATHER
    rt._torch_steps.ALL_GATHER = lambda out, t, group: calls.append(t.numel()) or real(
        out, t, group=group)
    try:
        full = torch.arange(2.0).reshape(2, 1)
        src = distribute_tensor(full, meshes[2, 2], [Shard(0), Shard(1)])
        want = src.redistribute(meshes[2, 2], [Replicate(), Shard(1)])
        for mode in ("native", "pytorch"):  # the plan: one all_gather on mesh dim 0
            for _ in range(2):  # the first call also exchanges the request's hash
                del calls[:]
                out = rt.redistribute(src, [Replicate(), Shard(1)], mode=mode)
                local = rt.redistribute_local(src.to_local(), [2, 2], [2, 1], "S(0)S(1)",
                                              "RS(1)", mode=mode)
            assert _same(out.to_local(), want.to_local()), (out.to_local(), want.to_local())
            assert _same(local, want.to_local()), (local, want.to_local())
            # Coordinates (c, 1) hold [1, 0] blocks: their group moves nothing.
            assert calls == ([] if rank % 2 else [1, 1]), calls
    finally:
        rt._torch_steps.ALL_GATHER = real


def _dtypes(rank, meshes):
    mesh = meshes[2, 2]
    full = (torch.arange(24.0).reshape(4, 6) - 7).to(torch.bfloat16)
    src = distribute_tensor(full, mesh, [Shard(0), Shard(1)])
    for dst in ([Replicate(), Shard(0)], [Shard(1), Shard(0)]):
        for mode in ("native", "pytorch"):
            assert _same(rt.redistribute(src, dst, mode=mode).to_local(),
                         src.redistribute(mesh, dst).to_local()), (dst, mode)
    partial = DTensor.from_local(full + rank, mesh, [Partial(), Partial()])
    assert _same(rt.redistribute(partial, [Replicate(), Replicate()]).to_local(),
                 partial.redistribute(mesh, [Replicate(), Replicate()]).to_local())
    # torch's own int16 collectives fail on gloo ("Invalid scalar type"): no reference.
    ints = distribute_tensor(full.to(torch.int16), mesh, [Shard(0), Shard(1)], src_data_rank=None)
    assert _same(rt.redistribute(ints, [Replicate(), Replicate()]).to_local(), full.to(torch.int16))
    partial16 = DTensor.from_local(full.to(torch.int16), mesh, [Partial(), Replicate()])
    try:
        rt.redistribute(partial16, [Replicate(), Replicate()])
        raise AssertionError("an int16 reduction ran")
    except TypeError as e:
        assert "torch.int16" in str(e) and "cast" in str(e), e
    def lacking():
        raise RuntimeError("Invalid scalar type")
    try:
        rt._torch_steps._collective("all_reduce", torch.int16, mesh.get_group(0), lacking)
        raise AssertionError("no TypeError")
    except TypeError as e:
        assert "gloo" in str(e) and "Cast the tensor" in str(e), e


def _zero_size(rank, meshes):
    mesh = meshes[2, 2]
    for shape, src, dst in (([0, 5], [Shard(0), Shard(1)], [Shard(1), Shard(0)]),
                            ([3, 0], [Shard(1), Replicate()], [Replicate(), Shard(0)])):
        d = distribute_tensor(torch.zeros(shape), mesh, src)
        out, want = rt.redistribute(d, dst), d.redistribute(mesh, dst)
        assert _same(out.to_local(), want.to_local()), (shape, out.to_local().shape)
        assert out.placements == want.placements and tuple(out.shape) == tuple(shape)


def _mismatched_requests(rank, meshes):
    mesh = meshes[4,]
    full = torch.arange(32.0).reshape(8, 4)
    src = distribute_tensor(full, mesh, [Shard(0)])
    dst = [Shard(1)] if rank == 3 else [Replicate()]
    try:
        rt.redistribute(src, dst)
        raise AssertionError("ranks with different requests ran")
    except ValueError as e:
        assert "different redistributions" in str(e) and "[[3]] asked" in str(e), e
    local = torch.zeros(3, 4) if rank == 0 else src.to_local()
    try:
        rt.redistribute_local(local, [4], [8, 4], "S(0)", "R")
        raise AssertionError("a wrong local shape ran")
    except ValueError as e:
        assert "coordinates [[0]]" in str(e), e
    assert _same(rt.redistribute(src, [Replicate()]).to_local(), full)  # the next call works


def _refusals(rank, meshes):
    d = distribute_tensor(torch.zeros(4, 4, requires_grad=True), meshes[4,], [Shard(0)])
    try:
        rt.redistribute(d, [Replicate()])
        raise AssertionError("autograd input accepted")
    except ValueError as e:
        assert "not differentiable" in str(e), e
    with torch.no_grad():
        assert rt.redistribute(d, [Replicate()]).shape == (4, 4)


CHECKS = [_empty_groups_skip_their_collective, _dtypes, _zero_size, _mismatched_requests,
          _refusals]


def _worker(rank, out_dir):
    logging.getLogger("torch.distributed.tensor._redistribute").setLevel(logging.ERROR)
    meshes = {(2, 2): init_device_mesh("cpu", (2, 2)), (4,): init_device_mesh("cpu", (4,))}
    results = {}
    for check in CHECKS:
        try:
            check(rank, meshes)
            results[check.__name__] = None
        except Exception as e:  # reported per check; checks fail alike on every rank
            results[check.__name__] = f"rank {rank}: {type(e).__name__}: {e}"
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
        json.dump(results, f)


@unittest.skipIf(SKIP, SKIP)
class RanksNeitherDieNorHang(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as out_dir:
            gloo_processes.run(_worker, WORLD, out_dir)
            cls.results = []
            for rank in range(WORLD):
                with open(os.path.join(out_dir, f"{rank}.json")) as f:
                    cls.results.append(json.load(f))

    def _check(self, name):
        errors = [r[name] for r in self.results if r[name] is not None]
        self.assertEqual(errors, [], "\n".join(errors))

    def test_a_group_of_empty_pieces_skips_its_collective(self):
        self._check("_empty_groups_skip_their_collective")

    def test_bf16_moves_int16_moves_and_its_reduction_is_refused_clearly(self):
        self._check("_dtypes")

    def test_a_dim_of_size_0_is_redistributed_like_torch(self):
        self._check("_zero_size")

    def test_different_requests_raise_on_every_rank_and_the_next_call_works(self):
        self._check("_mismatched_requests")

    def test_autograd_inputs_are_refused_outside_no_grad(self):
        self._check("_refusals")


if __name__ == "__main__":
    unittest.main()
