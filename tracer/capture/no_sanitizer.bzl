"""no_sanitizer_files: builds its srcs without sanitizers, whatever the config.

The preload library is LD_PRELOADed into programs that are not built with
AddressSanitizer (sort, python3, our own test programs); an ASan-instrumented
library there fails to load ("ASan runtime does not come first"), and an
ASan program cannot take a malloc replacement ahead of its runtime. So under
`--config=asan` (see .bazelrc) the library, and the programs it is tested
on, are built with every -fsanitize flag removed, while the capture tool and
the tests themselves keep the sanitizers. In the default config the
transition changes nothing.
"""

_COPT = "//command_line_option:copt"
_LINKOPT = "//command_line_option:linkopt"

def _strip(flags):
    return [f for f in flags if not f.startswith("-fsanitize") and not f.startswith("-fno-sanitize")]

def _no_sanitizer_transition_impl(settings, attr):
    return {
        _COPT: _strip(settings[_COPT]),
        _LINKOPT: _strip(settings[_LINKOPT]),
    }

_no_sanitizer_transition = transition(
    implementation = _no_sanitizer_transition_impl,
    inputs = [_COPT, _LINKOPT],
    outputs = [_COPT, _LINKOPT],
)

def _no_sanitizer_files_impl(ctx):
    files = depset(transitive = [d[DefaultInfo].files for d in ctx.attr.srcs])
    runfiles = ctx.runfiles(transitive_files = files)
    for d in ctx.attr.srcs:
        runfiles = runfiles.merge(d[DefaultInfo].default_runfiles)
    return [DefaultInfo(files = files, runfiles = runfiles)]

no_sanitizer_files = rule(
    implementation = _no_sanitizer_files_impl,
    doc = "Forwards the files and runfiles of srcs, built without sanitizers.",
    attrs = {
        "srcs": attr.label_list(cfg = _no_sanitizer_transition, allow_files = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
