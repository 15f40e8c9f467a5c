# Sourced by the bench scripts: builds //cli:reshard with -c opt (quietly,
# or again showing the errors) and sets $reshard to that binary. Not
# bazel-bin/: that link follows whichever configuration was built last.
bazel build -c opt //cli:reshard >/dev/null 2>&1 || bazel build -c opt //cli:reshard
reshard="$(bazel info -c opt bazel-bin 2>/dev/null)/cli/reshard"
