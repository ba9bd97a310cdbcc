#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every man page's EXAMPLE compiles, and the calls a user meets first have one.

usage: api_examples_test.py SOURCE_DIR MAN_DIR CC [MPICC]

The code blocks of a page's EXAMPLE section (an "Example:" paragraph's
`...` spans in the header, docs/api/man_pages.py) are compiled, in order, as C11 with
warnings as errors, as the body of a function whose parameters are those of
the page's SYNOPSIS: an example may use the documented function's
parameters by their names (q, self, job, ...), and the few names of the
caller's own program that CALLER declares below; everything else it
declares itself. The program includes the page's header after
syncq/syncq.h. A page of syncq/am_mpi.h is compiled with MPICC (it includes
mpi.h); without one its examples are reported as not checked. An example
whose call has the wrong arguments, a name the API does not have, or a
type that does not match fails here.

Every function of REQUIRED (each family's create and destroy, its main
operations, the postoffice's, active messages' and the MPI transport's
entry points) must have an EXAMPLE.
Prints every failure and exits 1; 0 when all hold.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

# Names an example may use without declaring them: the caller's own code,
# which the example calls into (its work, its handlers, its processes).
CALLER = """
void work(void);
void compute(int step, unsigned id);
void handle(syncq_po_msg *m);
void worker(syncq_po_proc *self, void *arg);
int main_process(syncq_po_proc *self, void *arg);
void on_ping(syncq_am_token *token, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx);
extern syncq_am_endpoint *my_ep; /* the caller's endpoint, */
extern syncq_am_peer *p;         /* a peer it connected to, */
extern bool running;             /* and its loop's condition and counts */
extern unsigned acks, sent;
"""

# The entry points whose pages must carry an example.
REQUIRED = (
    "syncq_queue_create syncq_queue_destroy syncq_queue_enqueue syncq_queue_dequeue "
    "syncq_stack_create syncq_stack_destroy syncq_stack_push syncq_stack_pop "
    "syncq_pqueue_create syncq_pqueue_destroy syncq_pqueue_insert syncq_pqueue_delete_min "
    "syncq_counter_create syncq_counter_destroy syncq_counter_fetch_add syncq_counter_load "
    "syncq_lock_create syncq_lock_destroy syncq_lock_lock syncq_lock_trylock syncq_lock_unlock "
    "syncq_barrier_create syncq_barrier_destroy syncq_barrier_wait "
    "syncq_registry_find "
    "syncq_po_create syncq_po_destroy syncq_po_spawn syncq_po_run syncq_po_send syncq_po_recv "
    "syncq_po_recv_timeout syncq_po_recv_blocking syncq_po_get syncq_po_free syncq_po_monitor syncq_po_link "
    "syncq_po_register syncq_po_whereis "
    "syncq_am_create syncq_am_register syncq_am_connect syncq_am_request syncq_am_poll syncq_am_wait "
    "syncq_am_mpi_create syncq_am_mpi_start syncq_am_mpi_peer syncq_am_mpi_destroy"
).split()


# Warnings are errors, but for a fragment's loose ends: a variable it sets
# and does not read, a parameter of the wrapper it does not use, a status it
# does not look at.
WARNINGS = ("-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-unused-variable",
            "-Wno-unused-but-set-variable", "-Wno-unused-value", "-Wno-unused-result")


def unroff(line):
    """A man page line as text: the escapes man_pages.py's roff() writes undone."""
    if line.startswith("\\&"):
        line = line[2:]
    return line.replace("\\\\", "\\")


def page_parts(page):
    """(header, declaration, [code blocks of its EXAMPLE]) of a man page."""
    lines = page.read_text(encoding="utf-8").split("\n")
    header = decl = None
    blocks, section, block = [], None, None
    for line in lines:
        m = re.match(r"^#include <([^>]+)>", line)
        if m and header is None:
            header = m.group(1)
        if line.startswith(".B ") and decl is None and section == "SYNOPSIS":
            decl = unroff(line[3:])
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif section == "EXAMPLE" and line == ".nf":
            block = []
        elif section == "EXAMPLE" and line == ".fi" and block is not None:
            blocks.append("\n".join(block))
            block = None
        elif block is not None:
            block.append(unroff(line))
    return header, decl, blocks


def wrapper_params(name, decl):
    """The parameter list of the declaration of name: "(type a, type b)"."""
    at = decl.find(name + "(")
    if at < 0:
        return None
    i = start = at + len(name)
    depth = 0
    while i < len(decl):
        depth += decl[i] == "("
        depth -= decl[i] == ")"
        if depth == 0:
            return decl[start:i + 1]
        i += 1
    return None


def program(header, name, params, code):
    return ("#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
            "#include <string.h>\n#include <syncq/syncq.h>\n"
            f"#include <{header}>\n{CALLER}\n"
            f"int example_of_{name}{params};\n"
            f"int example_of_{name}{params} {{\n  {{\n{code}\n  }}\n  return 0;\n}}\n")


def main():
    src, man_dir, cc = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    mpicc = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    failed = checked = 0
    unchecked = []
    with_example = set()
    with tempfile.TemporaryDirectory() as tmp:
        for page in sorted(man_dir.glob("syncq_*.3")):
            header, decl, blocks = page_parts(page)
            if not blocks:
                continue
            with_example.add(page.stem)
            params = wrapper_params(page.stem, decl or "")
            if header is None or params is None:
                print(f"FAIL: {page.stem}: an EXAMPLE on a page with no function declaration")
                failed += 1
                continue
            compiler = cc
            if header == "syncq/am_mpi.h":
                if not mpicc:
                    unchecked.append(page.stem)
                    continue
                compiler = mpicc
            # a page's blocks are one example, in order (a later block uses
            # what an earlier one declared)
            code = "\n".join(blocks)
            c = Path(tmp) / f"{page.stem}.c"
            c.write_text(program(header, page.stem, params, code), encoding="utf-8")
            build = subprocess.run([compiler, "-std=c11", *WARNINGS, "-I", str(src / "include"), "-c", "-o",
                                    str(c.with_suffix(".o")), str(c)], capture_output=True, text=True)
            checked += 1
            if build.returncode != 0:
                print(f"FAIL: {page.stem}(3): its EXAMPLE does not compile:\n{code}\n{build.stderr}")
                failed += 1
    for name in REQUIRED:
        if not (man_dir / f"{name}.3").exists():
            print(f"FAIL: {name}: no man page")
            failed += 1
        elif name not in with_example:
            print(f"FAIL: {name}(3) has no EXAMPLE")
            failed += 1
    if unchecked:
        print(f"not checked (no MPI compiler): {', '.join(unchecked)}")
    print(f"{checked} EXAMPLEs compiled, {failed} failures; "
          f"{len(REQUIRED)} entry points required to have one")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
