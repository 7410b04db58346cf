#!/usr/bin/env python3
"""Checks docs/ARCHITECTURE.md's dependency graph against the BUILD files.

The graph: for each package of the workspace, the other packages its
non-test rules name as inputs (srcs, deps, data), from one `bazel query`.
Prints the differences and exits 1 if the block between the
`dependency-graph` markers says otherwise; `--write` rewrites the block.
Run from the workspace root: tools/check_architecture.py [--write]
"""
import collections
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

DOC = "docs/ARCHITECTURE.md"
BLOCK = re.compile(r"(<!-- dependency-graph:[^\n]*-->\n```\n)(.*?)(```\n<!-- end dependency-graph -->)", re.S)


def package_of(label):
    return label[2:].split(":")[0]


def actual_graph():
    xml = subprocess.run(
        ["bazel", "query", "--noshow_progress",
         "kind(rule, //...) except attr(testonly, 1, //...)", "--output=xml"],
        check=True, capture_output=True, text=True).stdout
    graph = collections.defaultdict(set)
    for rule in ET.fromstring(xml).iter("rule"):
        pkg = package_of(rule.get("name"))
        graph[pkg]
        for dep in rule.iter("rule-input"):
            label = dep.get("name")
            if label.startswith("//") and package_of(label) != pkg:
                graph[pkg].add(package_of(label))
    return graph


def render(graph):
    width = max(len(p) for p in graph)
    lines = []
    for pkg in sorted(graph):
        deps = ", ".join(sorted(graph[pkg])) or "nothing of the project"
        lines.append(f"{pkg.ljust(width)}  -->  {deps}\n")
    return "".join(lines)


def main():
    text = open(DOC).read()
    match = BLOCK.search(text)
    if not match:
        print(f"check_architecture: {DOC} has no dependency-graph block")
        return 1
    want = render(actual_graph())
    if "--write" in sys.argv[1:]:
        open(DOC, "w").write(text[:match.start(2)] + want + text[match.end(2):])
        print(f"check_architecture: wrote the graph into {DOC}")
        return 0
    stated = match.group(2)
    if stated == want:
        print(f"check_architecture: {DOC} states the dependency graph of "
              f"{len(want.splitlines())} packages, as bazel query finds it")
        return 0
    stated_lines, want_lines = set(stated.splitlines()), set(want.splitlines())
    for line in sorted(stated_lines - want_lines):
        print(f"  stated, not true: {line}")
    for line in sorted(want_lines - stated_lines):
        print(f"  true, not stated: {line}")
    print(f"check_architecture: {DOC} and the BUILD files disagree "
          "(fix the code or run tools/check_architecture.py --write and explain the change)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
