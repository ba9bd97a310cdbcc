#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The folders of src/ and the public headers form layers, with no circle.

usage: structure_test.py SOURCE_DIR

Reads every C file under src/ and include/syncq/ and draws two kinds of
arrow from a file to another:
  - includes: each `#include "..."` line, resolved as the compiler does:
    in the including file's folder, then include/ (so "syncq/..." is
    include/syncq/...), then src/ for files of src/;
  - uses: a name a .c file uses (comments and strings aside) that another
    .c file defines at file scope and exports (not static), so a call is
    seen even where the header that declares it is not included.
Files belong to components: src/<folder>/** is <folder>; the top-level
src/*.c and src/*.h are "core"; include/syncq/<family>.h,
include/syncq/<family>/** and include/syncq/static/<family>/** belong to
<family> (am_mpi.h to am); the other top-level headers are "core", unless
the layer table names a file explicitly.

The layer table is the fenced block under "## Layers" in
docs/contributing.md: one layer a line, bottom first, "<n> <component>[,
<component>...] [files...]". An arrow between two components must go to a
strictly lower layer. The test fails, printing the path, on:
  - a circle between components;
  - an arrow to the same or a higher layer, or from or to a component the
    table does not list;
  - an include that resolves to no file;
  - a circle between files inside one component, unless the component is
    in ACCEPTED_FILE_CYCLES below; an accepted component that no longer
    has such a circle fails too, so the list can only shrink (and so for
    the uses in ACCEPTED_USES, left out of the arrows).
Before the tree, it checks itself on a scratch tree: a circle between two
folders and one between two files must each fail, the untangled tree pass.
Needs no build (pure Python).
"""

import re
import sys
import tempfile
from pathlib import Path

# Components whose files still call each other in a circle (their .c
# files call functions of one another). To be removed from this list as
# each is untangled; the test fails once one of them has no circle left.
ACCEPTED_FILE_CYCLES = set()

# Uses that go against the layers today, to be removed; the test fails
# once one of them is gone, so the list can only shrink. None left.
ACCEPTED_USES = set()

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
PREPROCESSOR = re.compile(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", re.M)
# A definition at file scope: clang-format puts the type and name of a
# function at the start of a line and its opening brace after ")".
FUNCTION_DEF = re.compile(r"^([A-Za-z_][\w \t\*]*?)\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^;{}()]*\))*\)\s*\{", re.M)
# An object defined at file scope: "type name = ..." or "type name;" at the
# start of a line, outside any brace.
OBJECT_DEF = re.compile(r"^([A-Za-z_][\w \t\*()]*?)\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])*\s*(?:=|;)", re.M)
WORD = re.compile(r"\b[A-Za-z_]\w*\b")
# GCC attributes before a definition (__attribute__((noinline)) int f(void)
# {...}): taken out before the definitions are matched, so such a function
# is seen as defined.
ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)[ \t]*")
NOT_EXPORTED = {"static", "typedef", "extern", "return", "goto", "case", "else"}


def strip(text):
    return COMMENT_OR_STRING.sub(lambda m: "" if m.group(0)[0] in "/" else '""', text)


def top_level(text):
    """The text outside every brace (file scope), preprocessor lines aside."""
    text = PREPROCESSOR.sub("", text)
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            if depth == 0:
                out.append("{")
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def definitions(path, code):
    """Names a .c file defines at file scope and exports."""
    if path.suffix != ".c":
        return set()
    scope = ATTRIBUTE.sub("", top_level(code))
    names = set()
    for m in FUNCTION_DEF.finditer(scope):
        if not NOT_EXPORTED & set(m.group(1).split()):
            names.add(m.group(2))
    for m in OBJECT_DEF.finditer(scope):
        words = set(m.group(1).replace("*", " ").split())
        if words and not NOT_EXPORTED & words:
            names.add(m.group(2))
    return names


def read_layers(root):
    doc = (root / "docs" / "contributing.md").read_text(encoding="utf-8")
    m = re.search(r"^## Layers\n.*?^```[^\n]*\n(.*?)^```", doc, re.S | re.M)
    if not m:
        raise SystemExit("FAIL: docs/contributing.md has no fenced layer table under '## Layers'")
    layer, explicit = {}, {}
    for line in m.group(1).splitlines():
        words = line.split()
        if not words:
            continue
        if not words[0].isdigit() or len(words) < 2:
            raise SystemExit(f"FAIL: docs/contributing.md layer table: bad line {line!r}")
        names = [n for n in words[1].split(",") if n]
        for name in names:
            layer[name] = int(words[0])
        for w in words[2:]:
            if w.startswith(("src/", "include/")):
                if not (root / w).is_file():
                    raise SystemExit(f"FAIL: docs/contributing.md layer table names {w}, which is no file")
                explicit[w] = names[0]
    return layer, explicit


def component(rel, folders, explicit):
    if rel in explicit:
        return explicit[rel]
    parts = rel.split("/")
    if parts[0] == "src":
        return parts[1] if len(parts) > 2 else "core"
    parts = parts[2:]  # below include/syncq
    if parts[0] == "static":
        parts = parts[1:]
    if len(parts) > 1:
        return parts[0]
    stem = Path(parts[0]).stem
    for name in (stem, stem.split("_")[0]):
        if name in folders:
            return name
    return "core"


def cycles(graph):
    """(circle, part) for each strongly connected part with more than one
    node: the shortest circle through its first node, and all its nodes."""
    index, low, stack, on, parts, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(part)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for part in parts:
        start = min(part)
        # the shortest way back to start inside the part
        prev, queue = {start: None}, [start]
        while queue:
            v = queue.pop(0)
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    found.append((list(reversed(path)) + [start], part))
                    queue = []
                    break
                if w in part and w not in prev:
                    prev[w] = v
                    queue.append(w)
    return found


def check(root, accepted_file_cycles, accepted_uses, say):
    """The failures of the tree at root, and a one-line summary; say()
    gets each accepted circle or use."""
    layer, explicit = read_layers(root)
    folders = {p.name for p in (root / "src").iterdir() if p.is_dir()}
    files = sorted(p for d in ("src", "include/syncq") for p in (root / d).rglob("*") if p.suffix in (".c", ".h"))
    rel = {p: p.relative_to(root).as_posix() for p in files}
    comp = {rel[p]: component(rel[p], folders, explicit) for p in files}
    code = {rel[p]: strip(p.read_text(encoding="utf-8", errors="replace")) for p in files}
    failures = []

    # why[(a, b)]: the first reason found for the file arrow a -> b
    why = {}
    for p in files:
        a = rel[p]
        for name in INCLUDE.findall(p.read_text(encoding="utf-8", errors="replace")):
            # the compiler's order: the including file's folder, then the
            # library's -I folders (include/, and src/ for src/ files)
            places = [p.parent, root / "include"] + ([root / "src"] if a.startswith("src/") else [])
            found = [t.resolve() for t in (d / name for d in places) if t.is_file()]
            if not found:
                failures.append(f"{a}: #include \"{name}\" resolves to no file")
                continue
            target = found[0]
            b = target.relative_to(root).as_posix()
            if b in comp and b != a:
                why.setdefault((a, b), f'#include "{name}"')
    owner = {}
    for p in files:
        for name in definitions(p, code[rel[p]]):
            owner.setdefault(name, set()).add(rel[p])
    accepted_seen = set()
    for a in code:
        if not a.endswith(".c"):
            continue  # a header declares what a .c file defines: no use
        for word in sorted(set(WORD.findall(code[a]))):
            if (a, word) in accepted_uses and owner.get(word):
                accepted_seen.add((a, word))
                say(f"accepted (to be removed): {a} uses {word} ({', '.join(sorted(owner[word]))})")
                continue
            for b in owner.get(word, ()):
                if b != a:
                    why.setdefault((a, b), f"uses {word}")
    for a, word in sorted(accepted_uses - accepted_seen):
        failures.append(f"{a} no longer uses {word}: take it out of ACCEPTED_USES")

    # between components
    arrows = {}
    for (a, b), reason in sorted(why.items()):
        ca, cb = comp[a], comp[b]
        if ca != cb:
            arrows.setdefault((ca, cb), f"{a} -> {b} ({reason})")
    graph = {}
    for ca, cb in arrows:
        graph.setdefault(ca, set()).add(cb)
    for circle, part in cycles(graph):
        steps = [arrows[(x, y)] for x, y in zip(circle, circle[1:])]
        text = "circle between folders " + " -> ".join(circle) + ":\n    " + "\n    ".join(steps)
        if len(part) > len(circle) - 1:
            text += "\n  (tangled with it: " + ", ".join(sorted(part - set(circle))) + ")"
        failures.append(text)
    for (ca, cb), example in sorted(arrows.items()):
        for c in (ca, cb):
            if c not in layer:
                failures.append(f"component {c} is in no layer of docs/contributing.md ({example})")
        if ca in layer and cb in layer and layer[cb] >= layer[ca]:
            where = f"{ca} (layer {layer[ca]}) -> {cb} (layer {layer[cb]})"
            failures.append(f"arrow {where} goes up or sideways: {example}")

    # between files of one component
    with_cycles = set()
    for c in sorted(set(comp.values())):
        inner = {}
        for (a, b) in why:
            if comp[a] == c and comp[b] == c:
                inner.setdefault(a, set()).add(b)
        found = cycles(inner)
        if found:
            with_cycles.add(c)
        for circle, part in found:
            steps = [f"{x} -> {y} ({why[(x, y)]})" for x, y in zip(circle, circle[1:])]
            text = f"circle between files of {c}:\n    " + "\n    ".join(steps)
            if len(part) > len(circle) - 1:
                text += "\n  (tangled with it: " + ", ".join(sorted(part - set(circle))) + ")"
            if c in accepted_file_cycles:
                say("accepted (to be removed): " + text)
            else:
                failures.append(text)
    for c in sorted(accepted_file_cycles - with_cycles):
        failures.append(f"{c} has no circle between its files any more: take it out of ACCEPTED_FILE_CYCLES")

    return failures, f"{len(files)} files, {len(graph)} components with arrows, {len(arrows)} arrows"


# The check's own test: a scratch tree with a circle between two folders
# (one of them an arrow up), and one between two files of a folder, must
# fail with each; the same tree untangled must pass.
SCRATCH = {
    "docs/contributing.md": "## Layers\n\n```\n1 core\n2 low\n3 high\n```\n",
    "include/syncq/status.h": "#define SYNCQ_OK 0\n",
    "include/syncq/low.h": '#include "syncq/status.h"\nint low_get(void);\n',
    "include/syncq/high.h": '#include "syncq/low.h"\nint high_get(void);\n',
    "src/low/low.c": '#include "syncq/low.h"\n#include "syncq/high.h"\nint low_get(void) { return high_get(); }\n',
    "src/high/high.c": '#include "syncq/high.h"\nint high_get(void) { return high_part(); }\n'
    "__attribute__((noinline, section(\"text\"))) int high_base(void) {\n  return 1;\n}\n",
    "src/high/part.c": '#include "syncq/high.h"\nint high_part(void) { return high_base() + low_get(); }\n',
}
UNTANGLED = {
    "src/low/low.c": '#include "syncq/low.h"\nint low_get(void) { return SYNCQ_OK; }\n',
    "src/high/part.c": '#include "syncq/high.h"\nint high_part(void) { return low_get(); }\n',
}
EXPECTED = ("circle between folders high -> low -> high", "arrow low (layer 2) -> high (layer 3) goes up",
            "circle between files of high")


def self_check():
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for tree in (SCRATCH, UNTANGLED):
            for name, text in tree.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text, encoding="utf-8")
            failures, _ = check(root, set(), set(), lambda text: None)
            if tree is SCRATCH:
                problems += [f"misses '{e}'" for e in EXPECTED if not any(f.startswith(e) for f in failures)]
                failures = [f for f in failures if not f.startswith(EXPECTED)]
            problems += [f"reports '{f}'" for f in failures]
    return ["self-check on a scratch tree " + p for p in problems]


def main():
    root = Path(sys.argv[1]).resolve()
    failures = self_check()
    found, summary = check(root, ACCEPTED_FILE_CYCLES, ACCEPTED_USES, print)
    failures += found
    for f in failures:
        print("FAIL: " + f)
    print(f"{summary}; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
