"""Repository rule exposing Debian's system C++ libraries as cc_library targets.

Link flags come from pkg-config where the library ships a .pc file, so the
Abseil link order (about 50 libraries) is whatever the installed version needs.
"""

_ABSL_MODULES = [
    "absl_flags",
    "absl_flags_parse",
    "absl_flags_usage",
    "absl_status",
    "absl_statusor",
    "absl_strings",
    "absl_str_format",
    "absl_synchronization",
    "absl_time",
    "absl_hash",
    "absl_raw_hash_set",
    "absl_random_random",
]

def _pkg_config_libs(ctx, modules):
    result = ctx.execute(["pkg-config", "--libs"] + modules)
    if result.return_code != 0:
        fail("pkg-config failed for %s (run tools/setup.sh first): %s" %
             (" ".join(modules), result.stderr))
    return result.stdout.strip().split(" ")

def _system_libs_impl(ctx):
    absl = _pkg_config_libs(ctx, _ABSL_MODULES)
    build = """
package(default_visibility = ["//visibility:public"])

cc_library(name = "abseil", linkopts = {absl})
cc_library(name = "protobuf", linkopts = ["-lprotobuf", "-lpthread"])
# The same two from their static archives, for a binary started once per
# measured run (the replayer, whose every run is a child exec'ing it): the
# dynamic loader mapped and relocated some 60 shared libraries at each
# start, 12.5 ms of it against 4.5 ms linked so. A binary's first dep, so
# that these flags come before the shared ones, which --as-needed drops.
cc_library(
    name = "static_abseil_protobuf",
    linkopts = ["-Wl,--as-needed", "-Wl,-Bstatic"] + {absl} + ["-lprotobuf", "-Wl,-Bdynamic"],
)
cc_library(name = "boost_pool")  # header-only, in /usr/include
cc_library(name = "gtest", linkopts = ["-lgtest", "-lpthread"])
cc_library(name = "gmock", linkopts = ["-lgmock", "-lgtest", "-lpthread"])
cc_library(name = "gtest_main", linkopts = ["-lgmock_main", "-lgmock", "-lgtest", "-lpthread"])
cc_library(name = "benchmark", linkopts = ["-lbenchmark", "-lpthread"])
cc_library(name = "benchmark_main", linkopts = ["-lbenchmark_main", "-lbenchmark", "-lpthread"])
""".format(absl = repr(absl))
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("BUILD", build)

system_libs = repository_rule(
    implementation = _system_libs_impl,
    local = True,
)
