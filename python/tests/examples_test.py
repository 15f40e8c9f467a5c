"""The runnable examples under python/examples/ that need more than `import reshard`."""

import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")

try:
    import torch.distributed.tensor._dtensor_spec as spec

    import reshard.torch  # noqa: F401
    SKIP = None if hasattr(spec, "ShardOrderEntry") else "torch has no DTensor shard orders"
except ImportError as e:
    SKIP = f"torch with DTensor is not importable: {e}"


README = os.path.join(os.path.dirname(os.path.dirname(HERE)), "README.md")


def _run(name):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], capture_output=True,
                          text=True, timeout=300)


def _readme_region(name):
    """The lines of an example between its `# readme: begin` and `# readme: end`, dedented."""
    lines = open(os.path.join(EXAMPLES, name)).read().split("\n")
    begin = [i for i, line in enumerate(lines) if line.strip() == "# readme: begin"]
    end = [i for i, line in enumerate(lines) if line.strip() == "# readme: end"]
    assert len(begin) == 1 and len(end) == 1 and begin[0] < end[0], name
    return textwrap.dedent("\n".join(lines[begin[0] + 1:end[0]])) + "\n"


class ReadmeShowsTheExamples(unittest.TestCase):
    """README's Python quick start is what scripts/test runs: each excerpt is an example's region."""

    def test_each_excerpt_is_a_python_block_of_the_readme(self):
        readme = open(README).read()
        for name in ("dtensor_redistribute.py", "planner_switch.py"):
            self.assertIn("```python\n" + _readme_region(name) + "```", readme, name)


@unittest.skipIf(SKIP, SKIP)
class DTensorRedistributeExample(unittest.TestCase):
    def test_it_runs_and_matches_dtensor(self):
        run = _run("dtensor_redistribute.py")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertIn("plan: S(0)S(1)->S(1)S(0)", run.stdout)
        self.assertEqual(run.stdout.count("== DTensor.redistribute"), 6, run.stdout)


@unittest.skipIf(SKIP, SKIP)
class PlannerSwitchExample(unittest.TestCase):
    def test_it_runs_with_the_same_results_planned_by_reshard(self):
        run = _run("planner_switch.py")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertIn("results equal: True; plans by reshard: True", run.stdout)


if __name__ == "__main__":
    unittest.main()
