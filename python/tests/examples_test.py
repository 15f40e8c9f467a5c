"""The runnable examples under python/examples/ that need more than `import reshard`."""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")

try:
    import torch.distributed.tensor._dtensor_spec as spec

    import reshard.torch  # noqa: F401
    SKIP = None if hasattr(spec, "ShardOrderEntry") else "torch has no DTensor shard orders"
except ImportError as e:
    SKIP = f"torch with DTensor is not importable: {e}"


@unittest.skipIf(SKIP, SKIP)
class DTensorRedistributeExample(unittest.TestCase):
    def test_it_runs_and_matches_dtensor(self):
        run = subprocess.run([sys.executable, os.path.join(EXAMPLES, "dtensor_redistribute.py")],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr[-3000:])
        self.assertEqual(run.stdout.count("== DTensor.redistribute"), 6, run.stdout)


if __name__ == "__main__":
    unittest.main()
