#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Doxygen input filter for syncq's public headers.

The headers document every declaration in plain C comments, in three forms:
a comment block right above a declaration, a comment at the end of the
declaration's line, and a file comment at the top ("syncq/queue.h — ...").
Doxygen reads only its own comment markers, so this filter turns each form
into the marker that means the same thing (/** above, /**< after, @file),
leaving the headers as they are. A comment above several declarations in a
row (no blank line between) documents each of them: they become a member
group whose documentation Doxygen gives every member (DISTRIBUTE_GROUP_DOC).
Escapes "<name>" in comments (paths like syncq/<family>/<algo>.h), which
Doxygen would read as HTML. Line numbers are kept (Doxygen's links to the
source stay right): nothing is added but characters inside lines.

Usage (Doxygen's INPUT_FILTER): doxygen_filter.py FILE  -> filtered text on stdout.
"""

import re
import sys

# A declaration or definition that a comment above it documents: anything
# but a preprocessor line other than #define, a closing brace or a blank.
_DECL = re.compile(r"^\s*(?!#(?!\s*define)|}|$)")
_TRAILING = re.compile(r"^(?P<code>[^/\"']*?[;,{)]\s*|\s*[A-Za-z_][A-Za-z0-9_]*\s*(=\s*[^,/]*)?,?\s*)/\*(?!\*)(?P<rest>.*)$")


_PLACEHOLDER = re.compile(r"<(?=[A-Za-z_][A-Za-z0-9_]*>)")


def _declaration_end(lines, k):
    """The last line of the declaration starting at line k (its ';'), or None
    when line k does not start a one-statement declaration."""
    if not _DECL.match(lines[k]) or lines[k].lstrip().startswith(("/*", "#", "typedef struct", "struct", "}")):
        return None
    for e in range(k, min(k + 8, len(lines))):
        code = lines[e].split("/*")[0].rstrip()
        if code.endswith(";"):
            return e
        if code.endswith("{") or not code:
            return None
    return None


def _group_following(lines, j):
    """After a comment block ending on line j: the last line of a run of two or
    more declarations that follow it with no blank line, or None."""
    k, last, count = j + 1, None, 0
    while k < len(lines):
        if lines[k].lstrip().startswith("/*") and "*/" in lines[k] and not lines[k].lstrip().startswith("/**"):
            break  # another comment documents what follows
        e = _declaration_end(lines, k)
        if e is None:
            break
        last, count, k = e, count + 1, e + 1
    return last if count >= 2 else None


def filter_text(text):
    lines = text.split("\n")
    out = []
    i = 0
    seen_code = False
    seen_file_comment = False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith("/*") and not stripped.startswith("/**"):
            # a whole comment block: find its end
            j = i
            while "*/" not in lines[j] and j + 1 < len(lines):
                j += 1
            block = lines[i:j + 1]
            nxt = lines[j + 1] if j + 1 < len(lines) else ""
            indent = line[: len(line) - len(stripped)]
            if "SPDX-License-Identifier" in block[0]:
                pass  # the licence line: not documentation
            elif not seen_code and not seen_file_comment:
                # the file comment: "syncq/x.h — what it is" becomes the file's documentation
                block[0] = indent + "/** @file" + stripped[2:]
                seen_file_comment = True
            elif _DECL.match(nxt):
                block[0] = indent + "/**" + stripped[2:]
                end = _group_following(lines, j)
                if end is not None:
                    block[0] = indent + "/**@{*/ " + block[0].lstrip()
                    lines[end] = lines[end] + " /**@}*/"
            out.extend(_PLACEHOLDER.sub(r"\\<", b) for b in block)
            i = j + 1
            continue
        if stripped and not stripped.startswith("#"):
            seen_code = True
        m = _TRAILING.match(line)
        if m and "*/" in m.group("rest"):
            line = m.group("code") + "/**<" + _PLACEHOLDER.sub(r"\\<", m.group("rest"))
        out.append(line)
        i += 1
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_text(f.read()))
