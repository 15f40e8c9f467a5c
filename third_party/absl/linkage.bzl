"""How reshard links Abseil: a build setting that a transition can set.

Debian's static Abseil archives are not position-independent, so a shared
object (the Python extension, //python:_reshard.so) must link the shared
libraries even under `-c opt`; //python sets "shared" on its edge to it.
"""

def _linkage_impl(ctx):
    value = ctx.build_setting_value
    if value not in ("default", "shared"):
        fail("@com_google_absl//:linkage must be default or shared, got " + value)

linkage_flag = rule(
    implementation = _linkage_impl,
    build_setting = config.string(flag = True),
)
