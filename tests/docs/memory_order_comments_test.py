#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every memory order weaker than seq_cst in the library and the lab carries
a comment (CODING_STYLE.md, "Memory orders").

usage: memory_order_comments_test.py SOURCE_DIR

Reads the C files under src/, include/ and lab/. A line that names
memory_order_relaxed, _consume, _acquire, _release or _acq_rel (outside a
preprocessor line, a C++ using-declaration, a comment or a string) passes
when a comment is on that line or in its paragraph above it: the lines
walked up from it, at most 12, stopping at a blank line or at a line that
closes a block (one comment may say why for a run of statements, as a
reset's relaxed stores). Whether the comment names the right pair is for
the reviewer; that one is there is checked here, so that an order added
without its reason fails.

Before the tree, it checks itself on scratch snippets: an order with no
comment, with its comment cut off by a blank line or left inside a closed
block, or with only a string that looks like a comment, must fail; one with
a comment on the line, above the statement, above a split call or at the
head of its paragraph must pass.
Prints each failure as FILE:LINE; exits 1 on any, 0 otherwise. Needs no
build (pure Python).
"""

import re
import sys
from pathlib import Path

WEAK = re.compile(r"\bmemory_order_(relaxed|consume|acquire|release|acq_rel)\b")
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
ROOTS = ("src", "include", "lab")
# A statement's earlier lines are walked up at most this far.
MAX_STATEMENT_LINES = 12


def strip_strings(line):
    return STRING.sub('""', line)


def comment_lines(lines):
    """Flags per line: inside (or ending) a /* */ comment, or a // line."""
    inside = False
    flags = []
    for line in lines:
        text = strip_strings(line)
        starts_inside = inside
        has = starts_inside or "/*" in text or "//" in text
        pos = 0
        while True:
            if inside:
                end = text.find("*/", pos)
                if end < 0:
                    break
                inside, pos = False, end + 2
            else:
                start = text.find("/*", pos)
                line_comment = text.find("//", pos)
                if line_comment >= 0 and (start < 0 or line_comment < start):
                    break
                if start < 0:
                    break
                inside, pos = True, start + 2
        flags.append((has, starts_inside))
    return flags


def code_part(line, starts_inside):
    """The line with its comments and strings removed."""
    text = strip_strings(line)
    if starts_inside:
        end = text.find("*/")
        text = "" if end < 0 else text[end + 2 :]
    text = re.sub(r"/\*.*?\*/", " ", text)
    text = re.sub(r"/\*.*$", " ", text)
    return re.sub(r"//.*$", " ", text)


def violations(text):
    lines = text.split("\n")
    flags = comment_lines(lines)
    found = []
    for i, line in enumerate(lines):
        has_comment, starts_inside = flags[i]
        code = code_part(line, starts_inside)
        if not WEAK.search(code) or code.lstrip().startswith(("#", "using std::")):
            continue
        if has_comment:
            continue
        ok = False
        j = i - 1
        while j >= 0 and i - j <= MAX_STATEMENT_LINES:
            stripped = lines[j].strip()
            if stripped == "":
                break
            if flags[j][0]:
                ok = True
                break
            if code_part(lines[j], False).strip() == "}":
                break
            j -= 1
        if not ok:
            found.append(i + 1)
    return found


SELF_CHECKS = [
    ("x = atomic_load_explicit(&a, memory_order_relaxed);\n", False),
    ("/* relaxed: a hint */\n\nx = atomic_load_explicit(&a, memory_order_relaxed);\n", False),
    ('f("/* not a comment */", atomic_load_explicit(&a, memory_order_acquire));\n', False),
    ("x = atomic_load_explicit(&a, memory_order_relaxed); /* relaxed: a hint */\n", True),
    ("/* acquire: pairs with the release store in unlock */\nx = atomic_load_explicit(&a, memory_order_acquire);\n", True),
    ("/* release: pairs with the acquire in lock */\natomic_store_explicit(&a,\n                      1, memory_order_release);\n", True),
    (
        "/* acq_rel: publishes the record and takes the previous one\n * (pairs with the exchange of the next sender) */\n"
        "if (atomic_exchange_explicit(&t, m,\n                             memory_order_acq_rel) == NULL) {\n",
        True,
    ),
    ("if (a) {\n  /* relaxed: a hint */\n  f();\n}\nz = atomic_load_explicit(&a, memory_order_relaxed);\n", False),
    ("/* relaxed: no waiter yet (the caller's precondition) */\nstore(&a, 0);\nx = atomic_load_explicit(&a, memory_order_relaxed);\n", True),
    ("x = atomic_load(&a); /* seq_cst needs no comment */\n", True),
]


def self_check():
    failures = []
    for snippet, should_pass in SELF_CHECKS:
        passed = not violations(snippet)
        if passed != should_pass:
            failures.append(f"self-check: {'passed' if passed else 'failed'} but should not: {snippet!r}")
    return failures


def main():
    root = Path(sys.argv[1])
    failures = self_check()
    count = 0
    for top in ROOTS:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".c", ".h") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            count += len(WEAK.findall(text))
            for line in violations(text):
                failures.append(f"{path.relative_to(root)}:{line}: an order weaker than seq_cst with no comment saying why")
    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{count} weak orders read, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
