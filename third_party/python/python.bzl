"""The headers of the Python that runs reshard's Python module (Debian's python3-dev).

Bazel compiles against the include directory that the interpreter named by
RESHARD_PYTHON reports (sysconfig), so the module's ABI is that interpreter's.
`pip install ./python` (python/setup.py) sets it to the interpreter running
pip; a bare `bazel build` (stage 1 of scripts/test compiles py_json) uses
/usr/bin/python3, Debian's, whose headers python3-dev installs.
"""

def _local_python_impl(ctx):
    python = ctx.os.environ.get("RESHARD_PYTHON", "/usr/bin/python3")
    result = ctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
    if result.return_code != 0:
        fail("local_config_python: %s cannot report its include directory: %s" %
             (python, result.stderr))
    include = result.stdout.strip()
    if not ctx.path(include + "/Python.h").exists:
        fail("local_config_python: no Python.h under %s (install Debian's python3-dev: " %
             include + "bash scripts/install_deps)")
    ctx.symlink(include, "include")
    ctx.file("BUILD", """# {include}, the headers of {python}.
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "python_headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)
""".format(include = include, python = python))

local_python = repository_rule(
    implementation = _local_python_impl,
    environ = ["RESHARD_PYTHON"],
    local = True,
)
