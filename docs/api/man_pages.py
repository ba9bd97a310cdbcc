#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Section-3 man pages, one per public function and registry entry, from
Doxygen's XML of the public headers (docs/api/Doxyfile.in).

usage: man_pages.py XML_DIR OUT_DIR VERSION

Beside them, in OUT_DIR/../man7, syncq(7): the overview a user's first
`man syncq` opens, made from the reference's main page
(docs/api/mainpage.md: its paragraphs, and its table of headers as a list).

Each page: NAME (the function and its first sentence), SYNOPSIS (the header
to include and the declaration), DESCRIPTION (the header comment that
documents it), ERRORS (the comment's closing run of "SYNCQ_X: cause."
sentences, one entry a status), THREAD SAFETY and PROGRESS (its "Thread
safety" and "Progress" paragraphs: docs/api/doxygen_filter.py), EXAMPLE
where it has one (its `...` code spans as code blocks, a statement a line:
tests/docs/api_examples_test.py compiles them), and SEE ALSO (the other
public names of the same header). A comment
whose first sentence only lists statuses or leans on the declaration
before it ("The same, checked") names its page from the function's name
instead, and a description that starts "The same" names that declaration.
Only syncq_* names get a page: a struct field or a generic word never
lands in the system's man3. Doxygen's own man output names pages by file
("lock.h.3" for three headers of that name) and by every member, so the
pages are written here instead.
"""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def text(node):
    return " ".join("".join(node.itertext()).split()) if node is not None else ""


def roff(s):
    """Text safe for roff: backslashes doubled, a leading dot or quote escaped."""
    s = s.replace("\\", "\\\\")
    return "\\&" + s if s[:1] in (".", "'") else s


# The titled paragraphs of an entry and the man page section of each.
SECTIONS = (("Thread safety", "THREAD SAFETY"), ("Progress", "PROGRESS"), ("Example", "EXAMPLE"))


# A first sentence that only lists statuses ("SYNCQ_OK or SYNCQ_FULL; ...",
# "OK, EMPTY") or leans on the declaration above it in the header ("The
# same, checked", "As syncq_queue_lcrq_init ...") says nothing in a NAME
# line, which apropos(1) shows alone (the filter's test, beside this file).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from doxygen_filter import LEANS  # noqa: E402


def name_line(name, header, first):
    """The NAME line's words: the comment's first sentence, or the
    function's name without its family's prefix."""
    if first and not LEANS.match(first):
        return first
    prefix = "syncq_" + header[len("syncq/"):-len(".h")].split("/")[0] + "_"
    op = name[len(prefix):] if name.startswith(prefix) else name[len("syncq_"):]
    return f"{op.replace('_', ' ')} ({header})"


def example_parts(simplesect):
    """[(kind, text)] of an "Example" paragraph: its code spans (`...` in the
    header, <computeroutput> in the XML) as "code", the words around them as
    "text"."""
    parts = []

    def words(s):
        s = " ".join((s or "").split())
        if s:
            parts.append(("text", s))

    for para in simplesect.findall("para"):
        words(para.text)
        for child in para:
            if child.tag == "computeroutput" and parts and parts[-1][0] == "code":
                # a span continued on the comment's next line: one example
                parts[-1] = ("code", parts[-1][1] + " " + "".join(child.itertext()).strip())
            elif child.tag == "computeroutput":
                parts.append(("code", "".join(child.itertext()).strip()))
            else:
                words("".join(child.itertext()))
            words(child.tail)
    return parts


def statements(code):
    """A code span's statements, one a line: split after each ';' (or '{',
    '}') outside parentheses, so a for loop's header stays whole."""
    out, cur, depth, init = [], "", 0, 0
    for ch in code:
        if ch == "{" and cur.rstrip()[-1:] in ("=", ",", "(", "{") and (init or cur.rstrip()[-1:] != "{"):
            init += 1  # an initialiser's brace ("= {7, 42}"), not a block's
        elif ch == "}" and init:
            init -= 1
            cur += ch
            continue
        cur += ch
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and not init and ch in ";{}":
            out.append(cur.strip())
            cur = ""
    if cur.strip():
        out.append(cur.strip())
    lines, indent = [], 0
    for st in out:
        if st == "}" or st.startswith("}"):
            indent = max(indent - 1, 0)
        if st == ";" and lines:
            lines[-1] += ";"  # "for (;;) {}" 's empty statement stays beside it
            continue
        lines.append("  " * indent + st)
        if st.endswith("{"):
            indent += 1
    return lines


# A description's run of "SYNCQ_EINVAL: out is NULL, or ..." sentences: the
# causes of each status the call returns, which the page lists under ERRORS.
ERROR_SENTENCE = re.compile(r"(?:^|(?<=[.);]) )(SYNCQ_[A-Z]+): ")


def split_errors(detail):
    """(the description before its run of status sentences, [(status,
    cause)]): a comment that says "SYNCQ_X: cause." for its statuses, one
    after the other at its end, has them listed under ERRORS."""
    found = list(ERROR_SENTENCE.finditer(detail))
    if not found:
        return detail, []
    errors = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(detail)
        errors.append((m.group(1), detail[m.end():end].strip().rstrip(";")))
    return detail[: found[0].start()].strip(), errors


def split_sections(detail_node):
    """(description, {title: text}): an entry's detailed description without
    its titled paragraphs (Doxygen's simplesect kind="par"), and those; the
    "Example" paragraph as example_parts gives it."""
    if detail_node is None:
        return "", {}
    found = {}
    for parent in list(detail_node.iter()):
        for child in list(parent):
            if child.tag == "simplesect" and child.get("kind") == "par":
                title = text(child.find("title"))
                if title == "Example":
                    found[title] = found.get(title, []) + example_parts(child)
                else:
                    body = " ".join(text(p) for p in child.findall("para"))
                    found[title] = (found[title] + " " + body).strip() if title in found else body
                tail = child.tail
                parent.remove(child)
                if tail and tail.strip():
                    parent.text = (parent.text or "") + tail
    return text(detail_node), found


def members(xml_dir):
    """{name: (header, declaration, brief, description, {section: text},
    line)} of every syncq_* function and variable Doxygen found in a header,
    and {header: [(line, name)]} of every syncq_/SYNCQ_ declaration there
    (macros too), for what a "The same" leans on."""
    seen, order = {}, {}
    for f in sorted(xml_dir.glob("*_8h.xml")):
        root = ET.parse(f).getroot()
        for m in root.iter("memberdef"):
            loc = m.find("location")
            if loc is not None and m.findtext("name", "").lower().startswith("syncq_"):
                order.setdefault(loc.get("file", ""), []).append((int(loc.get("line", "0")), m.findtext("name")))
            if m.get("kind") not in ("function", "variable"):
                continue
            name = m.findtext("name", "")
            header = m.find("location").get("file", "") if m.find("location") is not None else ""
            if not name.startswith("syncq_") or not header.startswith("syncq/") or "/static/" in header:
                continue
            decl = text(m.find("definition")) + text(m.find("argsstring"))
            if m.get("kind") == "variable" and not decl.startswith("extern"):
                decl = "extern " + decl
            brief = text(m.find("briefdescription"))
            detail, sections = split_sections(m.find("detaileddescription"))
            line = int(m.find("location").get("line", "0"))
            seen[name] = (header, decl + ";", brief, detail, sections, line)
    return seen, order


def page(name, header, decl, brief, detail, sections, siblings, version, before):
    first = brief or detail
    first = name_line(name, header, first.split(". ")[0].rstrip(".") if first else "")
    lines = [
        f'.TH "{name}" 3 "" "syncq {version}" "syncq"',
        ".SH NAME",
        roff(name) + " \\- " + roff(first),
        ".SH SYNOPSIS",
        ".nf",
        roff(f"#include <{header}>"),
        "",
        ".B " + roff(decl),
        ".fi",
        ".SH DESCRIPTION",
    ]
    if (brief or detail).startswith("The same") and before:
        lines += [".PP", roff(f"\"The same\" is {before}, declared before it in {header}:")]
    detail, errors = split_errors(detail)
    for part in (brief, detail):
        if part:
            lines += [".PP", roff(part)]
    link = ("pkg-config syncq-am-mpi-openmpi (or -mpich), with that MPI's mpicc" if header == "syncq/am_mpi.h"
            else "-lsyncq (pkg-config syncq)")
    lines += [".PP", roff(f"Link with {link}. Declared in {header}; the API reference's page of {header} "
                          "has the whole header.")]
    if errors:
        # the statuses whose cause the comment gives, one a paragraph
        lines.append(".SH ERRORS")
        for status, cause in errors:
            lines += [".TP", ".B " + status, roff(cause)]
    for title, heading in SECTIONS:
        if not sections.get(title):
            continue
        lines.append(f'.SH "{heading}"')
        if title != "Example":
            lines.append(roff(sections[title]))
            continue
        # each code span a block of its own, a statement a line (an
        # example's code is what tests/docs/api_examples_test.py compiles)
        for kind, words in sections[title]:
            if kind == "code":
                lines += [".PP", ".RS 4", ".nf"] + [roff(st) for st in statements(words)] + [".fi", ".RE"]
            else:
                lines += [".PP", roff(words)]
    if siblings:
        lines += [".SH SEE ALSO", roff(", ".join(f"{s}(3)" for s in siblings))]
    return "\n".join(lines) + "\n"


def inline(s):
    """A line of the main page's Markdown as roff: `code` in bold."""
    return re.sub(r"`([^`]+)`", r"\\fB\1\\fR", s.replace("\\", "\\\\"))


def overview_page(mainpage, version, entry_points):
    """syncq(7) from the main page: its paragraphs, its table's rows as
    tagged paragraphs, and SEE ALSO naming each header's entry point."""
    lines = [
        f'.TH "syncq" 7 "" "syncq {version}" "syncq"',
        ".SH NAME",
        "syncq \\- locks, queues, barriers, counters, active messages and a postoffice for C11",
        ".SH DESCRIPTION",
    ]
    para = []

    def flush():
        if para:
            text = " ".join(para)
            lines.extend([".PP", ("\\&" if text[:1] in (".", "'") else "") + inline(text)])
            para.clear()

    for raw in mainpage.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.startswith("|"):
            flush()
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == 2 and not set(cells[0]) <= set("-: ") and cells[0] != "header":
                lines += [".TP", inline(cells[0]), inline(cells[1])]
            continue
        if not line:
            flush()
            continue
        para.append(line)
    flush()
    lines += [".SH SEE ALSO", roff(", ".join(f"{n}(3)" for n in entry_points))]
    return "\n".join(lines) + "\n"


# The pages syncq(7)'s SEE ALSO names: a family's entry point each.
ENTRY_POINTS = ("syncq_queue_create", "syncq_stack_create", "syncq_pqueue_create", "syncq_lock_create",
                "syncq_barrier_create", "syncq_counter_create", "syncq_am_create", "syncq_po_create",
                "syncq_registry_find", "syncq_strerror")


def main():
    xml_dir, out, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.3"):
        old.unlink()
    found, order = members(xml_dir)
    man7 = out.parent / "man7"
    man7.mkdir(parents=True, exist_ok=True)
    mainpage = Path(__file__).resolve().parent / "mainpage.md"
    (man7 / "syncq.7").write_text(overview_page(mainpage, version, [n for n in ENTRY_POINTS if n in found]),
                                  encoding="utf-8")
    by_header = {}
    for name, (header, *_rest) in found.items():
        by_header.setdefault(header, []).append(name)
    for name, (header, decl, brief, detail, sections, line) in found.items():
        above = [(at, n) for at, n in order.get(header, []) if at < line]
        before = max(above)[1] if above else None
        before = f"{before}(3)" if before in found else before
        # every other name of the header: a cut at a fixed count kept the
        # alphabetically first ones and left out the calls next to this one
        # (syncq_po_recv_timeout's page did not name syncq_po_recv)
        siblings = sorted(n for n in by_header[header] if n != name)
        (out / f"{name}.3").write_text(page(name, header, decl, brief, detail, sections, siblings, version, before),
                                       encoding="utf-8")
    print(f"man pages: {len(found)} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
