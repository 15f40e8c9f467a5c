"""shared_object: a cc_binary(linkshared = 1) built so that it can be loaded.

Builds `binary` with @com_google_absl//:linkage set to "shared" (Debian's
static Abseil archives are not position-independent; third_party/absl) and
copies it to `out`, in every compilation mode.
"""

def _shared_abseil_impl(settings, attr):
    return {"@com_google_absl//:linkage": "shared"}

_shared_abseil = transition(
    implementation = _shared_abseil_impl,
    inputs = [],
    outputs = ["@com_google_absl//:linkage"],
)

def _shared_object_impl(ctx):
    src = ctx.files.binary[0]
    out = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.run_shell(
        inputs = [src],
        outputs = [out],
        command = "cp -f \"$1\" \"$2\"",
        arguments = [src.path, out.path],
        progress_message = "Copying %s" % ctx.attr.out,
    )
    return [DefaultInfo(files = depset([out]))]

shared_object = rule(
    implementation = _shared_object_impl,
    attrs = {
        "binary": attr.label(cfg = _shared_abseil, mandatory = True, allow_single_file = True),
        "out": attr.string(mandatory = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
