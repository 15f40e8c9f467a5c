"""reshard.plan answers every shared parity case as the oracle and the CLI do.

The cases are tests/testdata/{examples,pytorch-tests,golden}.jsonl (copies of
../shared/cases and scripts/gen_golden.py's output); each line's "expected"
is the oracle's answer. The rules are tests/parity_test.cc's: same ok,
algorithm, trace and steps, costs to 1e-9 relative, expected errors a prefix
of ours, the one deliberate difference (greedy S -> P and P(x) -> P(y) on size-1
mesh dims, spec §8) allowed. With RESHARD_CLI naming a built `reshard` (scripts/test
sets it), Plan.to_dict() must also equal `reshard batch`'s object exactly.
"""

import json
import os
import subprocess
import unittest

import reshard

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                        "testdata")
FILES = ["examples.jsonl", "pytorch-tests.jsonl", "golden.jsonl"]


def _cases(name):
    with open(os.path.join(TESTDATA, name)) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    for case in cases:
        # The oracle is PyTorch's planner: lines without a mode are pytorch mode.
        case.setdefault("mode", "pytorch")
    return cases


def _answer(case):
    """reshard.plan's answer as a batch result object (errors as ok=false)."""
    request = {k: v for k, v in case.items() if k != "expected"}
    try:
        return reshard.plan(**request).to_dict()
    except (ValueError, reshard.NoPlanError) as e:
        return {"id": case.get("id"), "ok": False, "error": str(e)}


def _close(want, got):
    return abs(want - got) <= 1e-12 or abs(want - got) <= 1e-9 * max(abs(want), abs(got))


def _size_one_partition(case, got):
    """A greedy plan whose S -> P and P(x) -> P(y) steps are all on size-1 mesh dims (§8)."""
    if not got.get("ok") or got.get("algorithm") != "greedy":
        return False
    moves = [s for s in got["steps"] if s["src"][0] != "R" and s["dst"][0] == "P"]
    return bool(moves) and all(case["mesh"][s["mesh_dim"]] == 1 and s["cost"] == 0.0
                               for s in moves)


def _differences(want, got):
    if want["ok"] != got["ok"]:
        return [f"ok: want {want['ok']}, got {got}"]
    if not want["ok"]:
        return [] if got["error"].startswith(want["error"]) else [
            f"error: want {want['error']!r}..., got {got['error']!r}"]
    diffs = [f"{k}: want {want[k]!r}, got {got[k]!r}" for k in ("algorithm", "trace")
             if want[k] != got[k]]
    if not _close(want["cost"], got["cost"]):
        diffs.append(f"cost: want {want['cost']!r}, got {got['cost']!r}")
    if len(want["steps"]) != len(got["steps"]):
        return diffs + [f"steps: want {len(want['steps'])}, got {len(got['steps'])}"]
    for i, (w, g) in enumerate(zip(want["steps"], got["steps"])):
        diffs += [f"step {i} {k}: want {w[k]!r}, got {g[k]!r}"
                  for k in ("mesh_dim", "src", "dst", "collective", "logical_shape")
                  if w[k] != g[k]]
        if not _close(w["cost"], g["cost"]):
            diffs.append(f"step {i} cost: want {w['cost']!r}, got {g['cost']!r}")
    return diffs


class PlanMatchesTheOracle(unittest.TestCase):
    def check_file(self, name):
        cases = _cases(name)
        self.assertGreater(len(cases), 0)
        mismatched = []
        for case in cases:
            got = _answer(case)
            want = case["expected"]
            if want.get("error") == "no_path" and _size_one_partition(case, got):
                continue
            diffs = _differences(want, got)
            if diffs:
                mismatched.append(f"{case['id']}: " + "; ".join(diffs))
        self.assertEqual(mismatched, [], f"{len(mismatched)} of {len(cases)} cases of {name}")

    def test_examples(self):
        self.check_file("examples.jsonl")

    def test_pytorch_tests(self):
        self.check_file("pytorch-tests.jsonl")

    def test_golden(self):
        self.check_file("golden.jsonl")


@unittest.skipUnless(os.environ.get("RESHARD_CLI"), "RESHARD_CLI names no reshard binary")
class PlanMatchesTheCli(unittest.TestCase):
    def test_to_dict_is_the_batch_object_for_every_case(self):
        cases = [c for name in FILES for c in _cases(name)]
        lines = "".join(json.dumps(c) + "\n" for c in cases)
        out = subprocess.run([os.environ["RESHARD_CLI"], "batch"], input=lines, text=True,
                             capture_output=True, check=True, timeout=600).stdout
        batch = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(len(batch), len(cases))
        differ = [c["id"] for c, b in zip(cases, batch) if _answer(c) != b]
        self.assertEqual(differ, [], f"{len(differ)} of {len(cases)} cases differ from the CLI")

    def test_cross_mesh_to_dict_is_the_batch_object(self):
        # Spec §14: disjoint, overlapping and equal rank sets, a Partial
        # source, uneven extents, a pytorch model (cost null).
        cases = [
            dict(id="tp", mesh=[4, 2], shape=[64, 32], src="S(0)S(1)", dst_mesh=[2],
                 dst_ranks=[8, 9], dst="S(1)"),
            dict(id="hsdp", mesh=[2, 4], shape=[30, 7], src="P(sum)S(0)", dst_mesh=[4],
                 dst_ranks=[2, 3, 4, 5], dst="S(1)", dtype="bf16"),
            dict(id="remesh", mesh=[2, 2, 2], shape=[16, 8], src="S(0)S(1)R", dst_mesh=[2, 4],
                 dst="RS(0)"),
            dict(id="priceless", mesh=[2], shape=[8], src="S(0)", dst_mesh=[2], dst_ranks=[2, 3],
                 dst="R", cost_model="pytorch"),
        ]
        lines = "".join(json.dumps(c) + "\n" for c in cases)
        out = subprocess.run([os.environ["RESHARD_CLI"], "batch"], input=lines, text=True,
                             capture_output=True, check=True, timeout=600).stdout
        batch = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([b["cross_mesh"] for b in batch], [True] * len(cases))
        self.assertEqual([reshard.plan(**c).to_dict() for c in cases], batch)


if __name__ == "__main__":
    unittest.main()
