"""DTensor.redistribute vs reshard.torch.redistribute (native, pytorch mode), executed.

    python3 -m pip install ./python                       # reshard in this environment
    python3 bench/dtensor_exec.py --rounds 5 --native-profile bench/profiles/gloo-loopback.json

8 gloo CPU processes (one spawn), one DeviceMesh per mesh shape. Per case
the source DTensor is built from a seeded global tensor, then each round
runs the three methods in turn (odd rounds in reverse order): torch's own
DTensor.redistribute, reshard.torch.redistribute in native mode and in
pytorch mode. A run's time is its slowest rank's (a barrier before, the
ranks' times max-reduced after); every run's local result is compared bit
for bit with the destination block of the global tensor. Peak memory is
each rank's peak resident set during the run above its resident set before
it (Linux clear_refs; glibc's mmap threshold fixed at 64 KiB so that freed
tensors leave the resident set), the largest over ranks. Prints one JSON
object per case and a markdown table (median ms, ratios, peak MB, the
steps each method ran) on stdout; progress on stderr.
"""

import argparse
import json
import logging
import os
import socket
import statistics
import sys
import tempfile
import time

# (name, mesh, shape, src, dst): realistic moves, 16-128 MB of float32.
SUITE = [
    ("fsdp_all_gather", (8,), (4096, 2048), "S(0)", "R"),
    ("fsdp_all_gather_128mb", (8,), (8192, 4096), "S(0)", "R"),
    ("fsdp_reduce_scatter", (8,), (4096, 2048), "P(sum)", "S(0)"),
    ("tp_reduce_scatter", (2, 4), (4096, 2048), "RP(sum)", "RS(0)"),
    ("hsdp_all_gather_2d", (2, 4), (4096, 2048), "RS(0)", "RR"),
    ("ulysses_all_to_all", (8,), (4096, 32, 128), "S(0)", "S(1)"),
    ("ckpt_2d_swap", (2, 4), (4096, 4096), "S(0)S(1)", "S(1)S(0)"),
    ("ckpt_3d_swap", (2, 2, 2), (256, 256, 256), "S(0)S(1)S(2)", "S(2)S(0)S(1)"),
    ("roles_swap_3d", (2, 2, 2), (4096, 2048), "S(0)S(1)R", "RS(0)S(1)"),
    ("shard_order_2d", (2, 4), (4096, 4096), "S(0)[0]S(0)[1]", "S(0)[1]S(0)[0]"),
    ("shard_order_3d", (2, 2, 2), (4096, 2048), "S(0)[1]S(0)[0]S(0)[2]", "S(0)S(0)S(0)"),
    ("multi_dim_s_to_s_2d", (2, 4), (4096, 4096), "S(0)S(0)", "S(1)S(1)"),
    ("multi_dim_s_to_s_3d", (2, 2, 2), (256, 256, 256), "S(0)S(0)S(1)", "S(2)S(2)S(0)"),
    ("uneven_swap_2x4", (2, 4), (4001, 3999), "S(0)S(1)", "S(1)S(0)"),
    ("uneven_all_to_all", (8,), (4001, 1029), "S(0)", "S(1)"),
]
METHODS = ("dtensor", "native", "pytorch")


def _resident():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _torch_layout(mesh, state, strided):
    """Torch placements of a canonical state; shard orders as _StridedShard if `strided`."""
    import reshard.torch as rt
    from torch.distributed.tensor._dtensor_spec import DTensorSpec

    placements, order = rt._torch_placements(state)
    if strided and not DTensorSpec.is_default_device_order(order):
        return DTensorSpec._convert_shard_order_to_StridedShard(order, placements, mesh), None
    return placements, order


def _source(mesh, full, src_state, rank):
    import reshard.torch as rt
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta

    placements, order = _torch_layout(mesh, src_state, strided=True)
    meta = TensorMeta(full.shape, full.stride(), full.dtype)
    spec = DTensorSpec(mesh, tuple(placements), tensor_meta=meta, shard_order=order)
    local = rt.local_shard(full, list(mesh.shape), src_state, rank)
    return DTensor(local, spec, requires_grad=False)


def _timed(fn, group):
    import torch
    import torch.distributed as dist

    dist.barrier(group=group)
    before, _ = _resident()
    _reset_peak()
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    peak = _resident()[1] - before
    both = torch.tensor([elapsed, float(peak)], dtype=torch.float64)
    dist.all_reduce(both, op=dist.ReduceOp.MAX, group=group)
    return out, both[0].item(), both[1].item()


def _steps(plan):
    return " ".join(f"{s.collective}{list(s.mesh_dims) if len(s.mesh_dims) > 1 else ''}"
                    for s in plan.steps)


def _case(name, mesh, shape, src, dst, rounds, native_options, rank):
    import torch
    import reshard.torch as rt

    src_state = rt._canonical(mesh.shape, shape, src)
    dst_state = rt._canonical(mesh.shape, shape, dst)
    g = torch.Generator().manual_seed(len(name))
    if "P(" in src:  # integer values: the shares reduce back exactly in any order
        full = torch.randint(-8, 9, shape, generator=g).float()
    else:
        full = torch.randn(shape, generator=g)
    source = _source(mesh, full, src_state, rank)
    want = rt.local_shard(full, list(mesh.shape), dst_state, rank)
    del full
    dst_torch, _ = _torch_layout(mesh, dst_state, strided=True)
    dst_placements, dst_order = rt._torch_placements(dst_state)
    methods = {
        "dtensor": lambda: source.redistribute(mesh, dst_torch),
        "native": lambda: rt.redistribute(source, dst_placements, shard_order=dst_order,
                                          mode="native", **native_options),
        "pytorch": lambda: rt.redistribute(source, dst_placements, shard_order=dst_order,
                                           mode="pytorch"),
    }
    group = None  # the mesh is the world
    times = {m: [] for m in METHODS}
    peaks = {m: 0.0 for m in METHODS}
    wrong = {m: 0 for m in METHODS}
    for r in range(rounds + 1):  # round 0 warms up (plans, process groups), untimed
        for m in (METHODS if r % 2 else tuple(reversed(METHODS))):
            out, seconds, peak = _timed(methods[m], group)
            local = out.to_local()
            wrong[m] += not (local.shape == want.shape and torch.equal(local, want))
            if r:
                times[m].append(seconds * 1e3)
                peaks[m] = max(peaks[m], peak / 2**20)
            del out, local
    plans = {m: _steps(rt.plan(source, dst_placements, shard_order=dst_order, mode=m,
                               **(native_options if m == "native" else {})))
             for m in ("native", "pytorch")}
    return {"case": name, "mesh": list(mesh.shape), "shape": list(shape), "src": src_state,
            "dst": dst_state, "mb": 4 * torch.Size(shape).numel() / 2**20,
            "median_ms": {m: statistics.median(times[m]) for m in METHODS},
            "times_ms": times, "peak_mb": peaks, "wrong": wrong, "plans": plans}


def _worker(rank, world, port, args, out_path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    logging.getLogger("torch.distributed.tensor._redistribute").setLevel(logging.ERROR)
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("gloo", rank=rank, world_size=world)
    meshes = {}
    native_options = {"profile": args.native_profile} if args.native_profile else {}
    results = []
    for name, mesh_shape, shape, src, dst in SUITE:
        if args.cases and name not in args.cases:
            continue
        if mesh_shape not in meshes:
            meshes[mesh_shape] = init_device_mesh("cpu", mesh_shape)
        start = time.perf_counter()
        result = _case(name, meshes[mesh_shape], shape, src, dst, args.rounds, native_options,
                       rank)
        if rank == 0:
            print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
            results.append(result)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def _table(results):
    lines = ["| case | MB | DTensor ms | native ms | pytorch ms | DTensor/native | "
             "DTensor/pytorch | peak MB DTensor / native / pytorch | plans differ | wrong |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in results:
        t, p = r["median_ms"], r["peak_mb"]
        differ = "yes" if r["plans"]["native"] != r["plans"]["pytorch"] else "no"
        lines.append(
            f"| {r['case']} | {r['mb']:.0f} | {t['dtensor']:.1f} | {t['native']:.1f} | "
            f"{t['pytorch']:.1f} | {t['dtensor'] / t['native']:.2f}x | "
            f"{t['dtensor'] / t['pytorch']:.2f}x | {p['dtensor']:.0f} / {p['native']:.0f} / "
            f"{p['pytorch']:.0f} | {differ} | {sum(r['wrong'].values())} |")
    lines.append("")
    lines.append("| case | native steps | pytorch-mode steps |")
    lines.append("| --- | --- | --- |")
    for r in results:
        lines.append(f"| {r['case']} | {r['plans']['native']} | {r['plans']['pytorch']} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per case (>= 1)")
    parser.add_argument("--cases", nargs="*", help="run only these cases (names of SUITE)")
    parser.add_argument("--native-profile", help="plan native mode with this cost profile")
    parser.add_argument("--json", help="also write the per-case objects here")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    unknown = set(args.cases or ()) - {c[0] for c in SUITE}
    if unknown:
        parser.error(f"--cases: unknown {sorted(unknown)}")
    # Freed tensors must leave the resident set for the peak to mean anything.
    os.environ["MALLOC_MMAP_THRESHOLD_"] = "65536"
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "results.json")
        mp.spawn(_worker, args=(8, port, args, out_path), nprocs=8, join=True)
        with open(out_path) as f:
            results = json.load(f)
    for r in results:
        print(json.dumps(r))
    print(_table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any(sum(r["wrong"].values()) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
