"""Builds `reshard`'s wheel: the pybind11 extension by Bazel, packed with lib/reshard/*.py.

    python3 -m pip install ./python            # -c opt (the default)
    RESHARD_COMPILATION_MODE=fastbuild python3 -m pip install ./python

The extension is //python:extension (BUILD.bazel: Abseil linked shared, so it
loads), compiled against the headers of the interpreter that runs this build
(RESHARD_PYTHON=sys.executable, third_party/python/python.bzl), so it imports
in that interpreter's environment. The build runs in the repository this file
lies in and reuses its Bazel cache; scripts/test builds in fastbuild to reuse
the objects of its first stage.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET = "//python:extension"
OUTPUT = "python/reshard/_reshard.so"


def _bazel_env():
    """This environment, less the directories pip's build isolation puts first on PATH.

    Bazel hands PATH to every action: a PATH that differs per build would
    rebuild the whole planner each time instead of reusing the cache.
    """
    env = dict(os.environ, RESHARD_PYTHON=sys.executable)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if "pip-build-env" not in p]
    env["PATH"] = os.pathsep.join(path)
    for key in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME"):
        env.pop(key, None)
    return env


def _build_extension():
    if not (ROOT / "WORKSPACE").is_file():
        sys.exit(f"reshard: {ROOT} is not reshard's repository (no WORKSPACE): build from a "
                 "checkout, `python3 -m pip install ./python`")
    bazel = os.environ.get("RESHARD_BAZEL", "bazel")
    if shutil.which(bazel) is None:
        sys.exit(f"reshard: no `{bazel}` on PATH: install the build dependencies "
                 "(bash scripts/install_deps) or name it in RESHARD_BAZEL")
    mode = os.environ.get("RESHARD_COMPILATION_MODE", "opt")
    if mode not in ("opt", "fastbuild", "dbg"):
        sys.exit(f"reshard: RESHARD_COMPILATION_MODE={mode!r}: expected opt, fastbuild or dbg")
    flags = ["-c", mode]
    env = _bazel_env()
    print(f"reshard: bazel build {' '.join(flags)} {TARGET} (RESHARD_PYTHON={sys.executable})",
          file=sys.stderr, flush=True)
    subprocess.run([bazel, "build", *flags, TARGET], cwd=ROOT, env=env, check=True)
    bin_dir = subprocess.run([bazel, "info", *flags, "bazel-bin"], cwd=ROOT, env=env,
                             check=True, capture_output=True, text=True).stdout.strip()
    return Path(bin_dir) / OUTPUT


class BuildPyWithExtension(build_py):
    """build_py, then the Bazel-built extension beside the package's .py files."""

    def run(self):
        super().run()
        built = _build_extension()
        dest = Path(self.build_lib) / "reshard" / "_reshard.so"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter (it carries a compiled extension)."""

    def has_ext_modules(self):
        return True


setup(
    packages=["reshard"],
    package_dir={"reshard": "lib/reshard"},
    cmdclass={"build_py": BuildPyWithExtension},
    distclass=BinaryDistribution,
)
