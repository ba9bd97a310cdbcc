#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every file, function, macro and test a document names exists.

usage: doc_references_test.py SOURCE_DIR [CTEST BINARY_DIR]

Reads README.md, CHANGELOG.md, CODING_STYLE.md, docs/*.md (the generated
docs/api/ aside) and models/spin/README.md, and checks what they name in
backticks:
  - a path of the repository (`src/queue/scq.c`, `include/syncq/lock.h`, `.ci/...`,
    `tests/...`, `lab/...`, `report/...`, `scripts/...`, `docs/...`,
    `examples/...`, `cmake/...`, `fuzz/...`, `models/...`), or a header
    named from include/ (`syncq/lock/mcs_tp.h`) or from include/syncq/
    (`lock/mcs_tp.h`), or a document (`CODING_STYLE.md`), exists on disk;
  - a name `syncq_*` or `SYNCQ_*` occurs somewhere in include/, src/, lab/,
    tests/ (tests/docs aside), fuzz/, examples/ or the build files (CMake options are SYNCQ_*);
  - a test name (`*_test`, or any name right after "CTest") is a test CTest
    lists in BINARY_DIR, or a test source file of that name.
Paths under those directories and names ending in _test count without
backticks too.
Placeholders (`<family>`, `...`) are skipped; a wildcard (`*`) or brace list
(`{a,b}`) must match.
Prints each broken reference with its document and line, and fails if any.
"""

import re
import subprocess
import sys
from pathlib import Path

TOP_DIRS = (".ci", "src", "include", "tests", "lab", "report", "scripts", "docs", "examples", "cmake", "fuzz", "models")
# Directories of include/syncq/ a document may name a header from.
HEADER_DIRS = ("barrier", "counter", "lock", "mp", "pqueue", "queue", "stack", "static")
NAME_DIRS = ("include", "src", "lab", "tests", "fuzz", "examples", "cmake", "scripts")
NAME_FILES = ("CMakeLists.txt", "Makefile")
SOURCE_SUFFIXES = {".c", ".h", ".cc", ".cpp", ".py", ".txt", ".cmake", ".in", ".sh", ""}
PLACEHOLDER = re.compile(r"[<>]|\.\.\.|\$")


def documents(root):
    docs = [root / "README.md", root / "CHANGELOG.md", root / "CODING_STYLE.md", root / "models/spin/README.md"]
    docs += sorted((root / "docs").glob("*.md"))
    return [d for d in docs if d.is_file()]


def spans(text):
    """(line, preceding text, span) for each backticked span, bare path and bare test name.

    Code and shell blocks (```c, ```sh) are skipped; a plain ``` block (a layout, a listing) is read for
    bare paths."""
    fence = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = None if fence is not None else line.strip()[3:]
            continue
        if fence:
            continue
        if fence is None:
            for m in re.finditer(r"`([^`]+)`", line):
                yield lineno, line[: m.start()], m.group(1).strip()
        # A path written without backticks ("see src/am/am.c.") is a reference too.
        bare = re.sub(r"`[^`]*`", " ", line) if fence is None else line
        for m in re.finditer(r"(?<![\w/.:-])((?:%s)/[\w./-]*)" % "|".join(map(re.escape, TOP_DIRS)), bare):
            yield lineno, bare[: m.start()], m.group(1).rstrip(".")
        for m in re.finditer(r"(?<![\w/.-])([a-z0-9_]+_test)(?![\w/.-])", bare):
            yield lineno, bare[: m.start()], m.group(1)


def path_candidates(root, span):
    """Glob patterns (relative to root) a path-looking span may name, or None when it is not a
    repository path. A wildcard (`lab/exp/*.c`) or a brace list (`static/lock/{mcs,tas}.h`)
    must match at least one file."""
    if re.fullmatch(r"[\w.-]+\.md", span):  # another document, at the top or in docs/
        return [span, "docs/" + span]
    if " " in span or "/" not in span or PLACEHOLDER.search(span):
        return None
    path = re.sub(r":\d+(-\d+)?$", "", span)  # file:line
    first = path.split("/", 1)[0]
    if first in TOP_DIRS:
        base = ""
    elif first == "syncq":
        base = "include/"
    elif first in HEADER_DIRS and path.endswith(".h"):
        base = "include/syncq/"
    else:
        return None
    m = re.search(r"\{([^{}]*)\}", path)
    paths = [path[: m.start()] + alt + path[m.end() :] for alt in m.group(1).split(",")] if m else [path]
    return [base + p for p in paths]


def exists(root, pattern):
    if not any(c in pattern for c in "*?["):
        return (root / pattern).exists()
    return any(root.glob(pattern.rstrip("/")))


def test_names(root, ctest, binary_dir):
    names = set()
    if ctest and binary_dir:
        out = subprocess.run([ctest, "-N"], cwd=binary_dir, capture_output=True, text=True, check=True).stdout
        names |= set(re.findall(r"Test\s+#\d+:\s+(\S+)", out))
        if not names:
            sys.exit(f"doc_references_test: ctest -N in {binary_dir} listed no tests")
    # Tests registered only where a tool is found (spin, MPI) are named in the build files.
    for f in [root / "CMakeLists.txt", *(root / "tests").rglob("CMakeLists.txt"), *(root / "fuzz").rglob("CMakeLists.txt")]:
        if f.is_file():
            text = f.read_text(encoding="utf-8")
            names |= set(re.findall(r"\badd_test\(\s*NAME\s+([A-Za-z0-9_.-]+)", text))
            names |= set(re.findall(r"\bsyncq_\w*test\w*\(\s*([A-Za-z0-9_.-]+)", text))
    for d in ("tests", "fuzz", "lab", "report"):
        for f in (root / d).rglob("*"):
            if f.is_file():
                names.add(f.stem)
    return names


class NameIndex:
    """A plain text search over the sources for syncq_/SYNCQ_ names (not over tests/docs, which names examples)."""

    def __init__(self, root):
        texts = []
        files = [root / f for f in NAME_FILES]
        for d in NAME_DIRS:
            files += [
                f
                for f in (root / d).rglob("*")
                if f.is_file() and f.suffix in SOURCE_SUFFIXES and (root / "tests/docs") not in f.parents
            ]
        for f in files:
            if f.is_file():
                try:
                    texts.append(f.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    pass
        self.text = "\n".join(texts)
        self.cache = {}

    def has(self, name):
        if name not in self.cache:
            pattern = r"\w*".join(map(re.escape, name.split("*"))) + ("" if name.endswith(("_", "*")) else r"\b")
            self.cache[name] = re.search(r"\b" + pattern, self.text) is not None
        return self.cache[name]


def main(argv):
    root = Path(argv[1]).resolve()
    ctest, binary_dir = (argv[2], argv[3]) if len(argv) > 3 else (None, None)
    tests = test_names(root, ctest, binary_dir)
    names = NameIndex(root)
    broken = []
    checked = 0
    for doc in documents(root):
        rel = doc.relative_to(root)
        for lineno, before, span in spans(doc.read_text(encoding="utf-8")):
            where = f"{rel}:{lineno}"
            places = path_candidates(root, span)
            if places is not None:
                checked += 1
                # A brace list names each of its files; plain candidates are alternatives.
                ok = all(exists(root, p) for p in places) if "{" in span else any(exists(root, p) for p in places)
                if not ok:
                    broken.append(f"{where}: file `{span}` does not exist")
                continue
            if re.fullmatch(r"[a-z0-9_]+_test", span) or (
                re.search(r"\bCTest\s*$", before) and re.fullmatch(r"[A-Za-z0-9_.-]+", span)
            ):
                checked += 1
                if span not in tests:
                    broken.append(f"{where}: test `{span}` is neither a CTest test nor a test source")
                continue
            # A name followed by "/" or ".x" is a directory, file or Python module (syncq_report.papers);
            # one followed by a placeholder (`syncq_am_mpi_<impl>`) is skipped; a wildcard
            # (`syncq_queue_*_init`, `SYNCQ_VERSION_*`) must match some name.
            for m in re.finditer(r"(?<![\w/.-])((?:syncq|SYNCQ)_[\w*]+)(?![\w<>{-]|/|\.\w)", span):
                name = m.group(1)
                checked += 1
                if not names.has(name):
                    broken.append(f"{where}: name `{name}` occurs nowhere in the sources")
    for b in broken:
        print(b)
    print(f"doc_references_test: {checked} references checked, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
