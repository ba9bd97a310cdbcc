#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The API reference's generated thread-safety and progress paragraphs work
for a typed header that follows the pattern, with no change to the scripts:
a new algorithm header and its source file, written here into a scratch
tree, get each function's paragraphs from the source's contract block and
registry entry (docs/api/contracts.py through docs/api/doxygen_filter.py).

usage: api_contracts_test.py SOURCE_DIR

Checks, on the scratch tree: every operation, init and destroy of the new
header gets both paragraphs, quoting the contract's Progress, Signal-safe
and Process-shared lines and naming the registry entry; a const query
gets read-only ones; hand-written "Thread safety:" and "Progress:" lines
become the paragraphs; a function whose role no rule knows gets none (so
the reference test names it); the
filter keeps the header's line count; and a contract whose progress
disagrees with its registry entry is caught. Prints each failure; exits 1
on any, 0 otherwise. Needs no build (pure Python).
"""

import sys
import tempfile
from pathlib import Path

HEADER = """/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue/demo.h — a queue for the reference's test.
 * Contract: src/queue/demo.c.
 */
#ifndef SYNCQ_QUEUE_DEMO_H
#define SYNCQ_QUEUE_DEMO_H
typedef struct syncq_queue_demo syncq_queue_demo;
/* Initialise. SYNCQ_EINVAL for NULL. */
SYNCQ_API int syncq_queue_demo_init(syncq_queue_demo *q, size_t capacity);
SYNCQ_API int syncq_queue_demo_destroy(syncq_queue_demo *q);
SYNCQ_API int syncq_queue_demo_enqueue(syncq_queue_demo *q, void *item); /* OK, FULL, EINVAL */
SYNCQ_API int syncq_queue_demo_dequeue(syncq_queue_demo *q, void **item); /* OK, EMPTY, EINVAL */
SYNCQ_API int syncq_queue_demo_frobnicate(syncq_queue_demo *q);
SYNCQ_API uint64_t syncq_queue_demo_count(const syncq_queue_demo *q); /* items so far */
/* Forget the counts.
 * Thread safety: demo hand-written sentence.
 * Progress: demo hand-written progress. */
SYNCQ_API int syncq_queue_demo_forget(syncq_queue_demo *q);
#endif
"""

SOURCE = """/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demo.c — a queue for the reference's test.
 *
 * Contract
 *   Source:      nobody's paper.
 *   Progress:    {progress} (a demo
 *                bound that spans two lines).
 *   Atomics:     none.
 *   Signal-safe: yes (demo signal). Process-shared: no (demo pointers).
 *   Limits:      capacity a power of two.
 */
int syncq_queue_demo_enqueue(syncq_queue_demo *q, void *item) {{ return 0; }}
const syncq_algo syncq_queue_demo_algo = {{
  SYNCQ_FAMILY_QUEUE, "demo", "a demo queue", "nobody", SYNCQ_PROGRESS_LOCK_FREE, SYNCQ_PROP_FIFO, &ops,
}};
"""

REGISTRY = "const syncq_algo *const syncq_builtin_queue[] = { &syncq_queue_demo_algo, NULL };\n"


def scratch(root, progress):
    (root / "include/syncq/queue").mkdir(parents=True)
    (root / "src/queue").mkdir(parents=True)
    (root / "include/syncq/queue/demo.h").write_text(HEADER, encoding="utf-8")
    (root / "src/queue/demo.c").write_text(SOURCE.format(progress=progress), encoding="utf-8")
    (root / "src/queue/queue_registry.c").write_text(REGISTRY, encoding="utf-8")


def main():
    src = Path(sys.argv[1])
    sys.path.insert(0, str(src / "docs" / "api"))
    import contracts
    import doxygen_filter

    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scratch(root, "lock-free")
        header = root / "include/syncq/queue/demo.h"
        out = doxygen_filter.filter_text(HEADER, str(header))
        if out.count("\n") != HEADER.count("\n"):
            bad.append("the filter changed the header's line count")
        lines = {l.split("(")[0].split()[-1]: l for l in out.split("\n") if l.startswith("SYNCQ_API")}
        for name in ("syncq_queue_demo_init", "syncq_queue_demo_destroy", "syncq_queue_demo_enqueue",
                     "syncq_queue_demo_dequeue"):
            line = lines.get(name, "")
            for word in ("@threadsafety", "@progress", "src/queue/demo.c", 'registry entry "demo"',
                         "SYNCQ_PROGRESS_LOCK_FREE"):
                if word not in line:
                    bad.append(f"{name}: no {word!r} in its documentation")
        for name in ("syncq_queue_demo_enqueue", "syncq_queue_demo_dequeue"):
            line = lines.get(name, "")
            for word in ("Lock-free (a demo bound that spans two lines)", "From a signal handler: yes (demo signal).",
                         "no (demo pointers).", "Limits: capacity a power of two.",
                         "Any number of threads (within the Limits that follow) may call enqueue and dequeue"):
                if word not in line:
                    bad.append(f"{name}: the contract's {word!r} is not quoted")
        if "OK, FULL, EINVAL" not in lines.get("syncq_queue_demo_enqueue", ""):
            bad.append("syncq_queue_demo_enqueue: its own comment was lost")
        if "@threadsafety" in lines.get("syncq_queue_demo_frobnicate", ""):
            bad.append("syncq_queue_demo_frobnicate: a verb no rule knows got paragraphs")
        count = lines.get("syncq_queue_demo_count", "")
        if "@threadsafety" not in count or "read-only query" not in count or "items so far" not in count:
            bad.append("syncq_queue_demo_count: a const query got no read-only paragraphs")
        forget = out[out.index("/** Forget the counts."):out.index("syncq_queue_demo_forget")]
        if "@threadsafety Demo hand-written sentence." not in forget or "@progress Demo hand-written" not in forget:
            bad.append("syncq_queue_demo_forget: hand-written Thread safety/Progress lines were not turned into paragraphs")
        if contracts.progress_class(contracts.contract_fields(root / "src/queue/demo.c")["Progress"]) != \
                "SYNCQ_PROGRESS_LOCK_FREE":
            bad.append("the contract's progress class was not read")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scratch(root, "wait-free")
        fields = contracts.contract_fields(root / "src/queue/demo.c")
        if contracts.progress_tokens(root / "src/queue/demo.c") == {contracts.progress_class(fields["Progress"])}:
            bad.append("a contract saying wait-free beside a lock-free registry entry was taken to agree")
    for b in bad:
        print(f"FAIL: {b}")
    if bad:
        return 1
    print("API reference: a new typed header gets its paragraphs from its contract with no change to the scripts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
