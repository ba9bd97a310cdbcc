#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Doxygen input filter for syncq's public headers.

The headers document every declaration in plain C comments, in three forms:
a comment block right above a declaration, a comment at the end of the
declaration's line, and a file comment at the top ("syncq/queue.h — ...").
Doxygen reads only its own comment markers, so this filter turns each form
into the marker that means the same thing (/** above, /**< after, @file),
leaving the headers as they are. A comment above several declarations in a
row (no blank line between) documents each of them that has no comment of
its own: a run of macros or types becomes a member group whose
documentation Doxygen gives such members (DISTRIBUTE_GROUP_DOC); in a run
of functions, each such function after the first gets the comment's text
at the end of its own line (every function gets a comment there: its
paragraphs below).
Escapes "<name>" in comments (paths like syncq/<family>/<algo>.h), which
Doxygen would read as HTML, and, outside `code`, an underscore that starts
a word or follows such a name (syncq_queue_<algo>_algo, "_init, _destroy"),
which its Markdown would read as an emphasis that hides the underscores up
to the next one. Line numbers are kept (Doxygen's links to the source stay
right): nothing is added but characters inside lines.

Every function's entry carries a "Thread safety" and a "Progress" paragraph
(and may carry an "Example"): a comment line that starts with
"Thread safety:", "Progress:" or "Example:" starts that paragraph (the
aliases of docs/api/Doxyfile.in). For the typed algorithm headers
(syncq/<family>/<algo>.h) both paragraphs are generated from the
algorithm's contract block and registry entries (docs/api/contracts.py);
the generic headers write them by hand.

Usage (Doxygen's INPUT_FILTER): doxygen_filter.py FILE  -> filtered text on stdout.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contracts  # noqa: E402  (beside this file)

# A declaration or definition that a comment above it documents: anything
# but a preprocessor line other than #define, a closing brace or a blank.
_DECL = re.compile(r"^\s*(?!#(?!\s*define)|}|$)")
_TRAILING = re.compile(r"^(?P<code>[^/\"']*?[;,{)]\s*|\s*[A-Za-z_][A-Za-z0-9_]*\s*(=\s*[^,/]*)?,?\s*)/\*(?!\*)(?P<rest>.*)$")
# A function declaration of a public name at file scope (SYNCQ_API or not:
# syncq/am_mpi.h's functions belong to their own library).
_FUNC = re.compile(r"^(?:SYNCQ_API\s+)?(?!static\b|typedef\b|return\b|#)[A-Za-z_][\w\s\*]*?\b(syncq_\w+)\s*\(")
# A comment line that starts a paragraph of its own: its label and the alias.
_PAR = re.compile(r"^(?P<lead>\s*(?:/\*+|\*)?\s*)(?P<label>Thread safety|Progress|Example):\s?")
_ALIAS = {"Thread safety": "@threadsafety ", "Progress": "@progress ", "Example": "@usage "}
_PAR_WORD = re.compile(r"@(?:threadsafety|progress|usage)\b")

_PLACEHOLDER = re.compile(r"<(?=[A-Za-z_][A-Za-z0-9_]*>)")
_WORD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9_\\])_(?=[A-Za-z0-9])")


def _escape(text):
    """text with each "<name>" escaped, and outside `code` each underscore
    that starts a word or follows a "<name>"."""
    parts = text.split("`")
    for k in range(0, len(parts), 2):  # the even parts lie outside `code`
        parts[k] = _WORD_UNDERSCORE.sub(r"\\_", parts[k])
    text = "`".join(parts)
    return _PLACEHOLDER.sub(r"\\<", text)

# A description whose first words only list statuses ("SYNCQ_EINVAL for
# NULL", "OK or FULL; ...") or lean on the declaration before it ("The same,
# checked") says nothing of what the call does; docs/api/man_pages.py takes
# the NAME line from the first sentence, which apropos(1) shows alone.
LEANS = re.compile(r"^(?:(?:SYNCQ_)?(?:OK|FULL|EMPTY|E[A-Z]+)\b|The same\b|As syncq_|(?:NULL|-1|0) for\b)")


def says_what(text):
    """Whether a description starts by saying what the call does: a
    sentence (a capital, a quoted value, a syncq_ name), not a status list
    nor a note on a parameter ("capacity: ignored", "frees the nodes")."""
    return bool(text) and not LEANS.match(text) and bool(re.match(r'[A-Z"*]|syncq_', text))


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
    """After a comment block ending on line j: the (start, end) lines of each
    declaration of a run of two or more that follow it with no blank line,
    or None."""
    k, run = j + 1, []
    while k < len(lines):
        if lines[k].lstrip().startswith("/*") and "*/" in lines[k] and not lines[k].lstrip().startswith("/**"):
            break  # another comment documents what follows
        e = _declaration_end(lines, k)
        if e is None:
            break
        run.append((k, e))
        k = e + 1
    return run if len(run) >= 2 else None


def _paragraphs(line):
    """A comment line with its paragraph label turned into the alias (the
    paragraph's first word capitalised, unless it is a name: syncq_x, errno)."""
    m = _PAR.match(line)
    if not m:
        return line
    rest = line[m.end():]
    first = re.match(r"[a-z]+\b(?![_(])", rest)
    if first and m.group("label") != "Example":
        rest = rest[0].upper() + rest[1:]
    return line[: m.end("lead")] + _ALIAS[m.group("label")] + rest


def _comment_text(block):
    """The words of a comment block (markers and leading stars removed), on one line."""
    body = "\n".join(block)
    body = re.sub(r"^\s*/\*+", "", body)
    body = re.sub(r"\*/\s*$", "", body)
    return " ".join(" ".join(re.sub(r"^\s*\*(?!/)", "", _paragraphs(l)) for l in body.split("\n")).split())


def _split_pars(text):
    """(description, paragraphs): the text before the first paragraph alias, and the rest."""
    m = _PAR_WORD.search(text)
    return (text, "") if not m else (text[: m.start()].strip(), text[m.start():].strip())


def _typed_header(path):
    """(source root, header path) when path is include/syncq/<family>/<x>.h, else None."""
    if path is None:
        return None
    p = Path(path).resolve()
    if len(p.parts) < 4 or p.parents[1].name != "syncq" or p.parents[2].name != "include" or p.parent.name == "static":
        return None
    return p.parents[3], p


def filter_text(text, path=None):
    lines = text.split("\n")
    out = []
    i = 0
    seen_code = False
    seen_file_comment = False
    copied = {}  # declaration start line -> the text of the comment above its run
    above = {}  # declaration start line -> (first, last) line of the comment right above it
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
                block = [_paragraphs(b) for b in block]
                block[0] = indent + "/**" + block[0].lstrip()[2:]
                above[j + 1] = (i, j)
                run = _group_following(lines, j)
                if run is not None and any(_FUNC.match(lines[s]) for s, _e in run):
                    text_above = _comment_text(lines[i:j + 1])
                    for s, _e in run[1:]:
                        copied[s] = text_above
                elif run is not None:
                    block[0] = indent + "/**@{*/ " + block[0].lstrip()
                    lines[run[-1][1]] = lines[run[-1][1]] + " /**@}*/"
            out.extend(_escape(b) for b in block)
            i = j + 1
            continue
        if stripped and not stripped.startswith("#"):
            seen_code = True
        m = _TRAILING.match(line)
        if m and "*/" in m.group("rest"):
            line = m.group("code") + "/**<" + _escape(m.group("rest"))
        out.append(line)
        i += 1
    _document_functions(lines, out, copied, above, path)
    return "\n".join(out)


def _document_functions(lines, out, copied, above, path):
    """Give every function declaration its whole documentation on its last
    line: the comment of its run (for all but the run's first), its own
    trailing comment, and for a typed header the generated paragraphs."""
    typed = _typed_header(path)
    header_text = "\n".join(lines)
    k = 0
    while k < len(lines):
        m = _FUNC.match(lines[k])
        e = _declaration_end(lines, k) if m else None
        if e is None:
            k += 1
            continue
        name = m.group(1)
        own = ""
        t = re.search(r"/\*\*<(.*?)\*/\s*$", out[e])
        if t:
            own = _paragraphs(t.group(1).strip().replace("\\<", "<"))  # escaped again below
            out[e] = out[e][: t.start()].rstrip()
        if own and k in above and not _PAR_WORD.match(own):
            # the comment right above is this function's: the trailing text
            # joins its description, before its first paragraph if it has one
            for n in range(above[k][0], above[k][1] + 1):
                p = _PAR_WORD.search(out[n])
                if p:
                    out[n] = out[n][: p.start()] + own + " " + out[n][p.start():]
                    own = ""
                    break
        # as Doxygen's DISTRIBUTE_GROUP_DOC, the run's comment describes the
        # functions that have no comment of their own; its paragraphs
        # (thread safety, progress) hold for every function of the run
        desc, pars = _split_pars(copied.get(k, ""))
        desc = "" if own else desc
        generated = ""
        what = contracts.summary(name, typed[1].parent.name) if typed is not None else None
        if what and k in above:
            # a typed function whose comment above starts with its statuses:
            # say first what it does (inside the comment's first line, so
            # the line numbers stay)
            first = above[k][0]
            opened = re.match(r"^(\s*/\*\*)\s*(.*)$", out[first])
            if opened and not says_what(opened.group(2)):
                out[first] = f"{opened.group(1)} {what} {opened.group(2)}"
            what = None
        elif says_what(desc) or says_what(own):
            what = None  # its description says what it does
        if typed is not None:
            decl = " ".join(l.split("/*")[0].strip() for l in lines[k:e + 1])
            found = contracts.paragraphs(name, decl, typed[1], header_text, typed[0])
            if found is not None:
                generated = f"@threadsafety {found[0]} @progress {found[1]}"
        # a typed function whose comments (if any) list statuses only: say
        # first what it does
        doc = " ".join(p for p in (what, desc, own, pars, generated) if p)
        if doc:
            out[e] = out[e] + " /**< " + _escape(doc.replace("*/", "* /")) + " */"
        k = e + 1


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_text(f.read(), sys.argv[1]))
