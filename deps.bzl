"""alloctrace_dependencies(): what a workspace that depends on alloctrace needs.

In your WORKSPACE (docs/building.md, "Use it in your project"):

    local_repository(name = "alloctrace", path = "/path/to/alloctrace")
    load("@alloctrace//:deps.bzl", "alloctrace_dependencies")
    alloctrace_dependencies()

It declares, unless the workspace already declares a repository of that name:

- @rules_cc: alloctrace's own re-export of Bazel 4.2.3's native C++ rules
  (Debian's bazel-rules-cc is too new for 4.2.3), from third_party/rules_cc.
- @rules_java: Debian's bazel-rules-java. Bazel 4.2.3 resolves Java
  toolchains even for a pure C++ build and would otherwise download it.
- @remote_coverage_tools: the two empty filegroups `bazel test` wants
  (third_party/remote_coverage_tools); coverage through Bazel is unavailable.
- @system: Debian's protobuf, Abseil, Boost, GoogleTest and Google Benchmark
  (third_party/system_libs.bzl; Abseil's link line comes from pkg-config).
  alloctrace's BUILD files name these as @system//:..., so the name is fixed.

The two local copies are found through a label of this repository, so they
work whatever path or name the workspace gave alloctrace. Nothing here reaches
the network; the packages come from tools/setup.sh (or apt-get).
"""

load("//third_party:system_libs.bzl", "system_libs")

def _local_copy_impl(ctx):
    # Symlinks every entry of a directory of alloctrace into this repository.
    # (A directory with its own WORKSPACE file has no label of its own inside
    # alloctrace, so it is reached from a file beside it.)
    src = ctx.path(ctx.attr.anchor).dirname.get_child(ctx.attr.subdir)
    if not src.exists:
        fail("alloctrace: %s is missing" % src)
    for entry in src.readdir():
        ctx.symlink(entry, entry.basename)

_local_copy = repository_rule(
    implementation = _local_copy_impl,
    attrs = {
        "anchor": attr.label(mandatory = True, allow_single_file = True),
        "subdir": attr.string(mandatory = True),
    },
    local = True,
)

def alloctrace_dependencies():
    """Declares the repositories alloctrace's targets load and depend on."""
    anchor = Label("//third_party:system_libs.bzl")
    if not native.existing_rule("rules_cc"):
        _local_copy(name = "rules_cc", anchor = anchor, subdir = "rules_cc")
    if not native.existing_rule("rules_java"):
        native.local_repository(
            name = "rules_java",
            path = "/usr/share/bazel/rules/java",
        )
    if not native.existing_rule("remote_coverage_tools"):
        _local_copy(
            name = "remote_coverage_tools",
            anchor = anchor,
            subdir = "remote_coverage_tools",
        )
    if not native.existing_rule("system"):
        system_libs(name = "system")
