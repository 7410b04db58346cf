"""The project's C++ rules: @rules_cc's, built with the project's one language
setting, here and in any workspace that depends on alloctrace.

Bazel 4.2.3 compiles C++ as C++11 unless told otherwise, and a workspace's
.bazelrc does not reach the builds of another workspace that depends on it
(examples/bazel, a user's project). So the setting travels with the targets:
every BUILD file of the project loads its cc_library, cc_binary and cc_test
from here, and ALLOCTRACE_COPTS is the one place the standard is named.
"""

load(
    "@rules_cc//cc:defs.bzl",
    _cc_binary = "cc_binary",
    _cc_library = "cc_library",
    _cc_test = "cc_test",
)

ALLOCTRACE_COPTS = ["-std=c++17"]

def cc_library(copts = [], **kwargs):
    _cc_library(copts = ALLOCTRACE_COPTS + copts, **kwargs)

def cc_binary(copts = [], **kwargs):
    _cc_binary(copts = ALLOCTRACE_COPTS + copts, **kwargs)

def cc_test(copts = [], **kwargs):
    _cc_test(copts = ALLOCTRACE_COPTS + copts, **kwargs)
