#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every public function has an entry in the API reference.

usage: api_reference_test.py SOURCE_DIR DOXYGEN_XML_DIR MAN_DIR

The public functions are the SYNCQ_API declarations of include/syncq (the
same list tests/symbols checks against the library's exports). Each must
appear in Doxygen's XML with a description (brief or detailed, from the
comment above or beside it) and have a section-3 man page of its own name.
Prints every function that lacks one and exits 1; 0 when all have both.
"""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

DECL = re.compile(r"SYNCQ_API [^;(]*\b(syncq_[A-Za-z0-9_]+) *[(;]")


def public_names(include):
    names = set()
    for header in sorted(include.rglob("*.h")):
        if "static" in header.relative_to(include).parts:
            continue  # the static inline bodies: their declarations are documented in the family header
        names.update(DECL.findall(header.read_text(encoding="utf-8")))
    return names


def text_of(node):
    return "".join(node.itertext()).strip() if node is not None else ""


def documented(xml_dir):
    docs = {}
    for f in xml_dir.glob("*.xml"):
        if f.name == "index.xml":
            continue
        for m in ET.parse(f).getroot().iter("memberdef"):
            name = text_of(m.find("name"))
            desc = text_of(m.find("briefdescription")) + text_of(m.find("detaileddescription"))
            if desc:
                docs[name] = desc
            else:
                docs.setdefault(name, "")
    return docs


def main():
    src, xml_dir, man_dir = (Path(a) for a in sys.argv[1:4])
    names = public_names(src / "include" / "syncq")
    docs = documented(xml_dir)
    no_entry = sorted(n for n in names if n not in docs)
    no_text = sorted(n for n in names if docs.get(n) == "")
    no_man = sorted(n for n in names if not (man_dir / f"{n}.3").exists())
    for label, bad in (("no reference entry", no_entry), ("an entry without a description", no_text),
                       ("no man page", no_man)):
        for n in bad:
            print(f"FAIL: {n}: {label}")
    if no_entry or no_text or no_man:
        print(f"{len(set(no_entry) | set(no_text) | set(no_man))} of {len(names)} public functions undocumented")
        return 1
    print(f"API reference: all {len(names)} public functions have a described entry and a man page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
