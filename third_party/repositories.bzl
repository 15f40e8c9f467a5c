"""reshard's external repositories, all local (see README: "Depending on reshard")."""

load("//third_party/python:python.bzl", "local_python")

def _path(prefix, name):
    return prefix + "third_party/" + name

def reshard_dependencies(prefix = ""):
    """Declares the system libraries reshard builds against.

    Args:
      prefix: path of the reshard checkout relative to the calling workspace
        (with a trailing slash), "" when called from reshard itself.
    """
    for repo, folder in [
        ("com_google_absl", "absl"),
        ("com_google_googletest", "googletest"),
        ("com_google_benchmark", "benchmark"),
        ("boost", "boost"),
        ("nlohmann_json", "nlohmann_json"),
        ("gloo", "gloo"),
        ("hiredis", "hiredis"),
        ("pybind11", "pybind11"),
    ]:
        if repo not in native.existing_rules():
            native.local_repository(name = repo, path = _path(prefix, folder))
    if "local_cuda" not in native.existing_rules():
        native.new_local_repository(
            name = "local_cuda",
            path = "/usr/local/cuda",
            build_file = "@reshard//third_party/cuda:BUILD.cuda" if prefix else "//third_party/cuda:BUILD.cuda",
        )
    if "local_config_python" not in native.existing_rules():
        local_python(name = "local_config_python")
