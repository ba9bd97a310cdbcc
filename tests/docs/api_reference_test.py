#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every public function has an entry in the API reference, with its thread
safety and its progress guarantee.

usage: api_reference_test.py SOURCE_DIR DOXYGEN_XML_DIR MAN_DIR

The public names are the SYNCQ_API declarations of include/syncq (the same
list tests/symbols checks against the library's exports) and the functions
of headers outside that macro (syncq/am_mpi.h, its own library). Each must
appear in Doxygen's XML with a description (brief or detailed, from the
comment above or beside it) and have a section-3 man page of its own name.
Each function's entry must also carry a non-empty "Thread safety" and
"Progress" paragraph (docs/api/doxygen_filter.py) and its man page the
sections THREAD SAFETY and PROGRESS; each man page's SEE ALSO names every
other page of its header (its SYNOPSIS's #include), and its NAME line
says what the function is, not its statuses ("OK, EMPTY"), "The same", a
note on a parameter or the function's name again (apropos shows that line
alone). A page stands alone: it never points "above" or "below" at text
it does not show, and every file of the repository it names exists. The create calls of CAUSES_REQUIRED, every init of
the typed headers (include/syncq/<family>/*.h) and every other call of
the headers of ERRORS_COVERED (all of include/syncq) declared to return a
status list under ERRORS each status with its cause. And each algorithm's contract block
(src/<family>/<algo>.c), from which the typed headers' paragraphs are
generated, must agree with the registry entries of its file: the progress
class its Progress line names first is every SYNCQ_PROGRESS_* the file
uses, an entry flagged SYNCQ_PROP_SIGNAL_SAFE (PROCESS_SHARED) has no
"Signal-safe: no" ("Process-shared: no") in its contract, and one whose
contract says "no" has no such flag. Doxygen's warnings log (beside its
XML) is empty: each of its warnings so far marked an entry Doxygen read
wrongly (an HTML tag or a Markdown emphasis that ate part of the text).
Prints every failure and exits 1; 0 when all hold.
"""

import copy
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

DECL = re.compile(r"SYNCQ_API [^;(]*\b(syncq_[A-Za-z0-9_]+) *[(;]")
# A function declaration of a syncq_ name at file scope, SYNCQ_API or not.
FUNC = re.compile(r"^(?:SYNCQ_API\s+)?(?!static\b|typedef\b|return\b|#)[A-Za-z_][\w \t\*]*?\b(syncq_\w+)\s*\(", re.M)
# A static inline function of a public header (pr.h's primitives, an alias's calls): public API too.
INLINE = re.compile(r"^static inline [^(;]*?\b(syncq_\w+)\s*\(", re.M)
PARAGRAPHS = (("Thread safety", "THREAD SAFETY"), ("Progress", "PROGRESS"))


def public_headers(include):
    for header in sorted(include.rglob("*.h")):
        if "static" in header.relative_to(include).parts:
            continue  # the static inline bodies: their declarations are documented in the family header
        yield header


def public_names(include):
    names = set()
    for header in public_headers(include):
        names.update(DECL.findall(header.read_text(encoding="utf-8")))
    return names


def public_functions(include):
    names = set()
    for header in public_headers(include):
        text = header.read_text(encoding="utf-8")
        names.update(FUNC.findall(text))
        names.update(INLINE.findall(text))
    return names


def text_of(node):
    return "".join(node.itertext()).strip() if node is not None else ""


def prose_of(node):
    """A detailed description's text without its titled paragraphs (Thread
    safety, Progress, Example): what the call does must be said besides."""
    if node is None:
        return ""
    node = copy.deepcopy(node)
    for parent in list(node.iter()):
        for child in list(parent):
            if child.tag == "simplesect" and child.get("kind") == "par":
                parent.remove(child)
    return text_of(node)


def documented(xml_dir):
    """{name: description} and {name: {paragraph title: text}} of every member."""
    docs, pars = {}, {}
    for f in xml_dir.glob("*.xml"):
        if f.name == "index.xml":
            continue
        for m in ET.parse(f).getroot().iter("memberdef"):
            name = text_of(m.find("name"))
            desc = text_of(m.find("briefdescription")) + prose_of(m.find("detaileddescription"))
            if desc:
                docs[name] = desc
            else:
                docs.setdefault(name, "")
            found = pars.setdefault(name, {})
            for s in m.iter("simplesect"):
                if s.get("kind") == "par":
                    title, body = text_of(s.find("title")), " ".join(text_of(p) for p in s.findall("para"))
                    if body:
                        found[title] = body
    return docs, pars


def man_sections(page):
    """{section heading: its text} of a man page."""
    out, heading = {}, None
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith(".SH"):
            heading = line[3:].strip().strip('"')
            out[heading] = ""
        elif heading is not None and line.strip() and not line.startswith("."):
            out[heading] += line + " "
    return out


def see_also_gaps(man_dir):
    """(page, [names of its header it does not name]) for each man page whose
    SEE ALSO leaves out another page declared in the same header."""
    header_of, see_also = {}, {}
    for page in sorted(man_dir.glob("syncq_*.3")):
        text = page.read_text(encoding="utf-8")
        m = re.search(r"^#include <([^>]+)>", text, flags=re.M)
        header_of[page.stem] = m.group(1) if m else None
        see_also[page.stem] = set(re.findall(r"(syncq_\w+)\(3\)", man_sections(page).get("SEE ALSO", "")))
    gaps = []
    for name, header in header_of.items():
        want = {n for n, h in header_of.items() if h == header and n != name}
        if want - see_also[name]:
            gaps.append((name, sorted(want - see_also[name])))
    return gaps


# A NAME line that says what the call does starts a sentence: a capital, a
# quoted value or a syncq_ name. Not: statuses ("OK, EMPTY", "SYNCQ_EINVAL
# for NULL"), a bad input's result ("NULL for NULL", "-1 for NULL"), a note
# on a parameter ("capacity: ignored", "cfg NULL: SPIN"), a word on the
# declaration before it ("The same", "As syncq_x"), or the function's own
# name again ("destroy (syncq/stack.h)", what man_pages.py writes when the
# comment gives nothing better).
# "Its ..." and "Their ..." lean on a declaration the page does not show.
NOT_A_SUMMARY = re.compile(r"(SYNCQ_[A-Z]+|OK|FULL|EMPTY|EINVAL|EBUSY|ENOMEM)\b|The same\b|As syncq_|(NULL|-1|0) for\b"
                           r"|(Its|Their)\b")


def name_only(name, words):
    """Whether words are only the name's own words, with or without its
    header after them ("pop (syncq/stack.h)" for syncq_stack_pop)."""
    words = re.sub(r"\s*\(syncq/[\w/]+\.h\)$", "", words).strip().lower()
    own = name[len("syncq_"):].replace("_", " ")
    return words in (name, own) or own.endswith(" " + words)


def empty_names(man_dir):
    """(page, its NAME words) for each man page whose NAME line does not say
    what the function (or variable) is: NOT_A_SUMMARY, or its name alone."""
    bad = []
    for page in sorted(man_dir.glob("syncq_*.3")):
        words = man_sections(page).get("NAME", "").split("\\-", 1)[-1].strip()
        if (not words or NOT_A_SUMMARY.match(words) or not re.match(r'[A-Z"*]|syncq_', words)
                or name_only(page.stem, words)):
            bad.append((page.stem, words))
    return bad


# A man page is read alone: "above" and "below" point at text it does not
# show (the header's other comments). A comparison ("above 2^40", "above
# it", "0 or above") is no such pointer: the word after it names what is
# compared.
POINTER = re.compile(r"(?<!\bor )(?<!\band )\b(?:above|below)\b(?=\s*(?:[).;:,(]|$))", re.I | re.M)


def positional_references(man_dir):
    """(page, the words around it) for each man page that points "above" or
    "below"."""
    bad = []
    for page in sorted(man_dir.glob("syncq_*.3")):
        for heading, body in man_sections(page).items():
            for m in POINTER.finditer(body):
                bad.append((page.stem, f"{heading}: ...{body[max(m.start() - 50, 0):m.end() + 10].strip()}..."))
    return bad


# A file of the repository a page names (src/queue/scq.c, docs/am-mpi.md,
# syncq/po.h); a name with a placeholder (<algo>) or a wildcard is no file.
PATH = re.compile(r"(?<![\w/.-])((?:src|docs|tests|examples|include|cmake|lab|syncq)/[\w./<>*{},-]*[\w>*}])")


def missing_files(src, man_dir):
    """(page, path) for each repository file a man page names that does not
    exist: a page points at text a reader cannot find."""
    bad = []
    for page in sorted(man_dir.glob("syncq_*.3")):
        for path in sorted(set(PATH.findall(page.read_text(errors="replace")))):
            if re.search(r"[<>*{}]", path) or (src / path).exists() or (src / "include" / path).exists():
                continue
            bad.append((page.stem, path))
    return bad


# Calls whose page must give, under ERRORS, the cause of each status it
# returns ("SYNCQ_EINVAL: capacity is not a power of two"): a status alone
# does not tell a user what to change.
CAUSES_REQUIRED = ("syncq_queue_create", "syncq_stack_create", "syncq_pqueue_create", "syncq_lock_create",
                   "syncq_counter_create", "syncq_barrier_create", "syncq_am_mpi_create")
# The families whose typed headers (include/syncq/<family>/*.h) declare
# inits (syncq_<family>_<algo>_init*): each init's page gives the causes too.
TYPED_FAMILIES = ("barrier", "counter", "lock", "pqueue", "queue", "stack")


def typed_inits(include):
    """The init functions of the typed headers of TYPED_FAMILIES."""
    names = []
    for family in TYPED_FAMILIES:
        for header in sorted((include / family).glob("*.h")):
            names += re.findall(r"^SYNCQ_API int (syncq_\w+_init\w*)\s*\(", header.read_text(encoding="utf-8"),
                                flags=re.M)
    return names


# The headers (glob patterns relative to include/syncq; static/ aside, as
# in public_headers) whose every status-returning call (declared "int",
# NOT_STATUS aside) gives, under ERRORS, each status it returns besides
# SYNCQ_OK with its cause: "SYNCQ_EMPTY: the queue held no item." It grew
# header by header; it is the whole of include/syncq now.
ERRORS_COVERED = ("*.h", "*/*.h")
# Calls declared "int" that return a number, not a status: their pages say
# what the number is and have no ERRORS. (Calls that return a count or a
# negative status, as syncq_registry_list, are covered: their errors have
# causes like any other's.)
NOT_STATUS = ("syncq_am_mpi_rank", "syncq_am_mpi_size", "syncq_am_token_sender", "syncq_lock_discipline",
              "syncq_po_backend_count", "syncq_po_mailbox_count", "syncq_stats_enabled", "syncq_version_number")


def status_calls(include):
    """The functions of ERRORS_COVERED declared to return int (a status)."""
    names = []
    for pattern in ERRORS_COVERED:
        for header in sorted(include.glob(pattern)):
            if "static" in header.relative_to(include).parts:
                continue  # static inline bodies: their declarations are the family header's
            text = header.read_text(encoding="utf-8")
            names += [n for n in re.findall(r"^(?:SYNCQ_API )?int (syncq_\w+)\s*\(", text, flags=re.M)
                      if n not in NOT_STATUS]
    return names


def missing_causes(man_dir, names):
    """(page, what is missing) for each page of names whose ERRORS section
    is absent, gives a status no cause, or leaves out a status its
    description names."""
    bad = []
    for name in names:
        page = man_dir / f"{name}.3"
        if not page.exists():
            continue  # reported as "no man page"
        text = page.read_text(encoding="utf-8")
        m = re.search(r"^\.SH ERRORS\n(.*?)(?=^\.SH |\Z)", text, flags=re.S | re.M)
        if not m:
            bad.append((name, "no ERRORS section"))
            continue
        listed = re.findall(r"^\.B (SYNCQ_\w+)\n(?!\.)(.+)$", m.group(1), flags=re.M)
        if not listed or len(listed) != len(re.findall(r"^\.B ", m.group(1), flags=re.M)):
            bad.append((name, "an ERRORS entry without its cause"))
        named = set(re.findall(r"\bSYNCQ_E[A-Z]+\b", man_sections(page).get("DESCRIPTION", "")))
        for status in sorted(named - {s for s, _cause in listed}):
            bad.append((name, f"{status}, named in its DESCRIPTION, is not under ERRORS"))
    return bad


def contract_disagreements(src):
    """The contracts of src/*/*.c that disagree with their registry entries."""
    sys.path.insert(0, str(src / "docs" / "api"))
    import contracts  # docs/api/contracts.py: the parser the reference uses

    bad = []
    for path in sorted((src / "src").glob("*/*.c")):
        fields = contracts.contract_fields(path)
        if not fields or "Progress" not in fields:
            continue
        rel = path.relative_to(src).as_posix()
        declared = contracts.progress_class(fields["Progress"])
        used = contracts.progress_tokens(path)
        if used and declared is None:
            bad.append(f"{rel}: the contract's Progress names no class (wait-free, lock-free, ...)")
        elif used and used != {declared}:
            bad.append(f"{rel}: contract says {declared}, registry entries say {', '.join(sorted(used))}")
        for _var, name, _prog, init, _registered in contracts.registry_entries(src, path):
            for field, flag in (("Signal-safe", "SYNCQ_PROP_SIGNAL_SAFE"), ("Process-shared", "SYNCQ_PROP_PROCESS_SHARED")):
                says_no = fields.get(field, "").lower().startswith("no")
                if says_no and flag in init:
                    bad.append(f"{rel}: entry \"{name}\" has {flag} but its contract says {field}: "
                               f"{fields[field][:60]}")
    return bad


def doxygen_warnings(xml_dir):
    """The lines of Doxygen's warnings log (WARN_LOGFILE of docs/api/Doxyfile.in,
    the folder above the XML), paths shortened to include/..."""
    log = xml_dir.parent / "warnings.log"
    if not log.exists():
        return []
    return [re.sub(r"^.*?/(include/syncq/)", r"\1", line) for line in log.read_text().splitlines() if line.strip()]


def main():
    src, xml_dir, man_dir = (Path(a) for a in sys.argv[1:4])
    include = src / "include" / "syncq"
    names = public_names(include) | public_functions(include)
    functions = public_functions(include)
    docs, pars = documented(xml_dir)
    no_entry = sorted(n for n in names if n not in docs)
    no_text = sorted(n for n in names if docs.get(n) == "")
    no_man = sorted(n for n in names if not (man_dir / f"{n}.3").exists())
    failures = 0
    for label, bad in (("no reference entry", no_entry), ("an entry without a description", no_text),
                       ("no man page", no_man)):
        for n in bad:
            print(f"FAIL: {n}: {label}")
    missing = set(no_entry) | set(no_text) | set(no_man)
    for n in sorted(functions - set(no_entry)):
        for title, heading in PARAGRAPHS:
            if not pars.get(n, {}).get(title):
                print(f"FAIL: {n}: its reference entry has no \"{title}\" paragraph")
                missing.add(n)
            page = man_dir / f"{n}.3"
            if page.exists() and not man_sections(page).get(heading, "").strip():
                print(f"FAIL: {n}: its man page has no {heading} section")
                missing.add(n)
    for name, left_out in see_also_gaps(man_dir):
        print(f"FAIL: {name}: its man page's SEE ALSO leaves out {', '.join(left_out[:3])}"
              f"{' ...' if len(left_out) > 3 else ''} ({len(left_out)} of its header)")
        missing.add(name)
    for name, words in empty_names(man_dir):
        print(f"FAIL: {name}: its man page's NAME line says only \"{words[:60]}\"")
        missing.add(name)
    for name, where in positional_references(man_dir):
        print(f"FAIL: {name}: its man page points at text it does not show: {where}")
        missing.add(name)
    for name, path in missing_files(src, man_dir):
        print(f"FAIL: {name}: its man page names {path}, which does not exist")
        missing.add(name)
    for name, what in missing_causes(man_dir, sorted(set(CAUSES_REQUIRED) | set(typed_inits(include)) | set(status_calls(include)))):
        print(f"FAIL: {name}: its man page's ERRORS: {what}")
        missing.add(name)
    for line in contract_disagreements(src):
        print(f"FAIL: {line}")
        failures += 1
    for line in doxygen_warnings(xml_dir):
        print(f"FAIL: Doxygen: {line}")
        failures += 1
    if missing or failures:
        print(f"{len(missing)} of {len(names)} public names lack part of their reference; "
              f"{failures} contract disagreement(s) and Doxygen warning(s)")
        return 1
    print(f"API reference: Doxygen warned of nothing; all {len(names)} public names have a described entry and a man page; "
          f"all {len(functions)} functions state their thread safety and progress, "
          f"all {len(set(status_calls(include)))} status calls the causes of their errors; "
          "contracts agree with the registry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
