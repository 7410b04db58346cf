#!/usr/bin/env python3
"""Checks every link in README.md and docs/*.md: a relative link must name a
file or directory of this repository (inside it), and a #fragment must name
a heading of the linked Markdown page. Links that leave the repository
(http:, https:, absolute paths, ../ above the root) are errors: the README
and docs/ stand alone.

    tools/check_doc_links.py            # from anywhere; exits 1 on a bad link
    tools/check_doc_links.py FILE.md... # check these instead

Run by tools/test.sh. Prints one line per bad link, then a count.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]*)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"`+[^`]*`+")


def markdown_lines(path):
    """The file's lines outside fenced code blocks, with inline code removed."""
    out = []
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if not in_fence:
                out.append((number, line.rstrip("\n")))
    return out


def slug(heading):
    """GitHub's anchor for a heading."""
    text = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    for _, line in markdown_lines(path):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def check(path):
    """Returns (links checked, errors) for one Markdown file."""
    errors = []
    count = 0
    rel = os.path.relpath(path, ROOT)
    for number, line in markdown_lines(path):
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            target = m.group(1)
            count += 1
            where = f"{rel}:{number}: ({target})"
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                errors.append(f"{where} leaves the repository")
                continue
            file_part, _, fragment = target.partition("#")
            if file_part.startswith("/"):
                errors.append(f"{where} is an absolute path")
                continue
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if os.path.commonpath([ROOT, dest]) != ROOT:
                errors.append(f"{where} points outside the repository")
                continue
            if not os.path.exists(dest):
                errors.append(f"{where} names no file")
                continue
            if fragment:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    errors.append(f"{where} has a #fragment but is not a Markdown page")
                elif fragment not in anchors(dest):
                    errors.append(f"{where} names no heading of {os.path.relpath(dest, ROOT)}")
    return count, errors


def main(argv):
    if argv:
        files = [os.path.abspath(a) for a in argv]
    else:
        docs = os.path.join(ROOT, "docs")
        files = [os.path.join(ROOT, "README.md")] + sorted(
            os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    total = 0
    bad = []
    for f in files:
        n, errors = check(f)
        total += n
        bad += errors
    for e in bad:
        print(e)
    if total == 0:
        print("no links found: the check would prove nothing")
        return 1
    print(f"{total} links in {len(files)} files checked, {len(bad)} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
