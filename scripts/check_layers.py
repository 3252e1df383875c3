#!/usr/bin/env python3
"""Checks that the code keeps the layering docs/ARCHITECTURE.md describes.

The rules are read from docs/ARCHITECTURE.md itself, so the guide and the check cannot
drift apart:
  - the table under "## What each folder owns": column 1 names a folder (`core/`), the
    column headed "may include" lists the folders its files may include (`core`, `market`,
    ...; "—" for none). Anything not listed is forbidden. Test and benchmark files
    (*_test.cc, *_bench.cc, *test_util.h, *_fuzz.cc) may also include `testing/`.
  - a line `<!-- layer-check: torch-allowed = PATTERN, PATTERN -->`: the only files (glob
    patterns on the path below src/, or on the file name) that may include LibTorch
    (<torch/...>, <ATen/...>, <c10/...>).
  - `internal::` names belong to the folder that declares them: a file may use its own
    folder's `internal` namespace only (core's is `rlt::internal`, a folder's is
    `rlt::<folder>::internal`).
Exit status 0 when every file keeps the rules, 1 with one line per violation
(file:line: what is wrong) otherwise, 2 when the guide cannot be read.

Usage: scripts/check_layers.py [REPO_ROOT]
"""
import fnmatch
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/')
TORCH_RE = re.compile(r'^\s*#\s*include\s*<(torch|ATen|c10)/')
# An `internal::` name, with the namespaces that qualify it (e.g. "config::internal::X",
# "rlt::internal::X", "internal::X").
INTERNAL_RE = re.compile(r'((?:\b[A-Za-z_]\w*::)*)\binternal::')


def fail_guide(msg):
    print(f"check_layers: docs/ARCHITECTURE.md: {msg}", file=sys.stderr)
    sys.exit(2)


def read_rules(guide_path):
    with open(guide_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    allowed = {}
    torch_patterns = None
    in_section = False
    col = None
    for line in lines:
        m = re.search(r"<!--\s*layer-check:\s*torch-allowed\s*=\s*(.*?)\s*-->", line)
        if m:
            torch_patterns = [p.strip() for p in m.group(1).split(",") if p.strip()]
        if line.startswith("## "):
            in_section = line.strip() == "## What each folder owns"
            col = None
            continue
        if not in_section or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if col is None:
            heads = [c.lower() for c in cells]
            if "may include" not in heads:
                fail_guide("the table of 'What each folder owns' has no 'may include' column")
            col = heads.index("may include")
            continue
        if set(cells[0]) <= set("-: "):
            continue  # the header's separator row
        m = re.fullmatch(r"`([a-z_]+)/`.*", cells[0])
        if not m:
            fail_guide(f"cannot read the folder in table row: {line}")
        names = re.findall(r"`([a-z_]+)`", cells[col])
        allowed[m.group(1)] = set(names)
    if not allowed:
        fail_guide("no folder rows found under '## What each folder owns'")
    if torch_patterns is None:
        fail_guide("no '<!-- layer-check: torch-allowed = ... -->' line")
    return allowed, torch_patterns


def is_test_file(name):
    return (name.endswith("_test.cc") or name.endswith("_bench.cc") or name.endswith("test_util.h")
            or name.endswith("_fuzz.cc"))


def check_internal(path, folder, text, problems):
    for lineno, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        for q in INTERNAL_RE.finditer(code):
            quals = [p for p in q.group(1).split("::") if p]
            if quals == ["rlt"]:
                quals = ["core"]  # rlt::internal is core's
            elif quals and quals[0] == "rlt":
                quals = quals[1:]
            elif quals and (quals[0] not in FOLDERS or quals[0] == "testing"):
                continue  # another library's (benchmark::internal, GoogleTest's testing::internal)
            if not quals:
                # Unqualified: the folder's own `internal` when it declares one (inside
                # rlt::<folder>), else core's rlt::internal.
                owner = folder if folder in FOLDERS_WITH_INTERNAL else "core"
            else:
                owner = quals[-1]
            if owner != folder:
                what = "rlt::internal (core/)" if owner == "core" else f"rlt::{owner}::internal"
                problems.append(f"{path}:{lineno}: uses {what}, another folder's internal "
                                f"names; make what it needs part of that folder's public API")


FOLDERS = set()
FOLDERS_WITH_INTERNAL = set()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    allowed, torch_patterns = read_rules(os.path.join(root, "docs", "ARCHITECTURE.md"))
    src = os.path.join(root, "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    FOLDERS.update(folders)
    problems = []
    for folder in folders:
        if folder not in allowed:
            problems.append(f"src/{folder}/: a folder the table of docs/ARCHITECTURE.md does "
                            f"not list; add its row")
    texts = {}
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                full = os.path.join(dirpath, name)
                with open(full, encoding="utf-8", errors="replace") as f:
                    texts[(folder, os.path.relpath(full, src), name)] = f.read()
                if re.search(rf"namespace\s+(rlt::{folder}::)?internal\b",
                             texts[(folder, os.path.relpath(full, src), name)]):
                    FOLDERS_WITH_INTERNAL.add(folder)
    for (folder, rel, name), text in sorted(texts.items()):
        shown = "src/" + rel
        ok = allowed.get(folder, set()) | {folder}
        if is_test_file(name):
            ok = ok | {"testing"}
        torch_ok = any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in torch_patterns)
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE_RE.match(line)
            if m and m.group(1) in FOLDERS and m.group(1) not in ok:
                problems.append(f"{shown}:{lineno}: includes {m.group(1)}/, which "
                                f"docs/ARCHITECTURE.md does not allow in {folder}/")
            if TORCH_RE.match(line) and not torch_ok:
                problems.append(f"{shown}:{lineno}: includes LibTorch, allowed only in "
                                f"{', '.join(torch_patterns)} (docs/ARCHITECTURE.md)")
        check_internal(shown, folder, text, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s) of the layering in "
              f"docs/ARCHITECTURE.md", file=sys.stderr)
        return 1
    print(f"check_layers: {len(texts)} files keep the layering of docs/ARCHITECTURE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
