"""Runs the Python tests and prints one line per test for scripts/test.

    python3 -m pip install ./python && python3 python/tests/run_tests.py

Lines: "PASS: python: <test>", "FAIL: python: <test>" (with the traceback
indented below it), "SKIP: python: <test> (<reason>)". Exit code 1 when a
test failed or errored.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class LineResult(unittest.TestResult):
    def _name(self, test):
        return f"python: {test.id()}"

    def addSuccess(self, test):
        super().addSuccess(test)
        print(f"PASS: {self._name(test)}", flush=True)

    def _failed(self, test, err):
        print(f"FAIL: {self._name(test)}", flush=True)
        for line in self._exc_info_to_string(err, test).splitlines()[-25:]:
            print(f"    | {line}", flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._failed(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._failed(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print(f"SKIP: {self._name(test)} ({reason})", flush=True)


def main():
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern="*_test.py", top_level_dir=HERE)
    result = LineResult()
    suite.run(result)
    return 1 if result.failures or result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
