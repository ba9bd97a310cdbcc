# SPDX-License-Identifier: BSD-2-Clause
"""The thread-safety and progress paragraphs of a typed algorithm header's
functions (include/syncq/<family>/<algo>.h), read from the algorithm's
contract block (src/<family>/<algo>.c) and its registry entries, so the API
reference says what the source says and cannot drift from it.

Used by docs/api/doxygen_filter.py (which puts the paragraphs into every
function's reference entry) and tests/docs/api_reference_test.py (which
checks that each contract's progress agrees with its registry entries).

A function's contract file is found without a list: the files the header
names ("Contract: src/queue/scq.c", "Contracts: ..."), else the file of its
family that defines it, else src/<family>/<header's name>.c. Its role comes
from the last words of its name (_init, _enqueue, _lock, ...: ROLES and
FAMILY_OPS below), or, for any other name whose first parameter is a
const object, is a read-only query; a name with no known role gets no
paragraphs, and the reference test then names it, so a new verb needs its
sentences here or hand-written in its header comment ("Thread safety:" and
"Progress:").
"""

import re
from pathlib import Path

# Fields of a contract block: "  Label:   text", continued by deeper-indented
# lines; two fields may share a line ("Signal-safe: no. Process-shared: no.").
_FIELD = re.compile(r"(?:(?<=^)|(?<=[.;)]\s))([A-Z][A-Za-z-]*(?: [a-z]+)?):\s")
_FIELDS_WANTED = ("Progress", "Signal-safe", "Process-shared", "Memory", "Limits")
_ALGO = re.compile(r"const syncq_algo (syncq_[\w#]+_algo) = \{(.*?)\};", re.S)
_PROGRESS_WORDS = {
    "wait-free": "SYNCQ_PROGRESS_WAIT_FREE",
    "lock-free": "SYNCQ_PROGRESS_LOCK_FREE",
    "obstruction-free": "SYNCQ_PROGRESS_OBSTRUCTION",
    "blocking": "SYNCQ_PROGRESS_BLOCKING",
}
_FAMILY_ENUM = {"lock": "SYNCQ_FAMILY_LOCK", "barrier": "SYNCQ_FAMILY_BARRIER", "counter": "SYNCQ_FAMILY_COUNTER",
                "queue": "SYNCQ_FAMILY_QUEUE", "stack": "SYNCQ_FAMILY_STACK", "pqueue": "SYNCQ_FAMILY_PQUEUE"}


def _squash(s):
    return " ".join(s.split())


def contract_block(path):
    """The text of the 'Contract' part of a source file's opening comment
    (comment markers removed), or None."""
    text = Path(path).read_text(encoding="utf-8")
    m = re.search(r"/\*(.*?)\*/", text[text.find("/*", 2):] if text.startswith("/* SPDX") else text, re.S)
    if not m or "Contract" not in m.group(1):
        return None
    body = m.group(1)
    body = body[body.index("Contract") + len("Contract"):]
    return "\n".join(re.sub(r"^\s*\*?", "", line) for line in body.split("\n"))


def contract_fields(path):
    """{label: text} of a contract block's fields (whitespace squashed)."""
    block = contract_block(path)
    if block is None:
        return None
    flat = _squash(block)
    fields, marks = {}, list(_FIELD.finditer(flat))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(flat)
        label = m.group(1)
        if label in _FIELDS_WANTED or label.split()[0] in _FIELDS_WANTED:
            fields.setdefault(label.split()[0] if label.split()[0] in _FIELDS_WANTED else label,
                              flat[m.end():end].strip())
    return fields


def progress_class(progress_text):
    """The registry's enumerator that a contract's Progress text names first
    ("lock-free (...)" -> SYNCQ_PROGRESS_LOCK_FREE), or None."""
    m = re.match(r"\s*([A-Za-z-]+)", progress_text or "")
    return _PROGRESS_WORDS.get(m.group(1).lower()) if m else None


def registry_entries(src_root, path):
    """[(variable, name or None, progress enumerator, props text, registered)]
    of the syncq_algo entries a source file defines. A name built by a macro
    is None; registered: the variable appears in a src/*/*_registry.c list."""
    text = Path(path).read_text(encoding="utf-8")
    lists = " ".join(p.read_text(encoding="utf-8") for p in sorted(Path(src_root, "src").glob("*/*_registry.c")))
    out = []
    for var, init in _expanded_entries(text):
        name = re.search(r"SYNCQ_FAMILY_\w+\s*,\s*\"([^\"]+)\"", init)
        prog = re.search(r"SYNCQ_PROGRESS_\w+", init)
        registered = ("&" + var) in lists
        out.append((var, name.group(1) if name else None, prog.group(0) if prog else None, init, registered))
    return out


def _split_args(s):
    """Top-level comma-separated arguments of a macro call's text."""
    args, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"' and not cur.endswith("\\"):
            quoted = not quoted
        if not quoted and ch in "([{":
            depth += 1
        elif not quoted and ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return args + [cur.strip()]


def _expanded_entries(text):
    """(variable, initializer) of each syncq_algo the file defines, those a
    function-like macro defines expanded at each of its invocations."""
    out = []
    for m in _ALGO.finditer(text):
        var, init = m.group(1), m.group(2)
        if "##" not in var:
            out.append((var, init))
            continue
        start = text.rfind("#define", 0, m.start())
        d = re.match(r"#define\s+(\w+)\(([^)]*)\)", text[start:])
        if not d:
            continue
        params = [a.strip() for a in d.group(2).split(",")]
        for call in re.finditer(r"^" + d.group(1) + r"\((.*?)\)\s*$", text, re.M | re.S):
            args = dict(zip(params, _split_args(call.group(1))))
            sub = lambda s: re.sub(r"\b(\w+)\b", lambda w: args.get(w.group(1), w.group(1)), s).replace("##", "")
            out.append((sub(var), sub(init)))
    return out


def progress_tokens(path):
    """Every SYNCQ_PROGRESS_* a source file uses outside its comments (its
    registry entries' progress, macro-built ones included)."""
    text = re.sub(r"/\*.*?\*/", "", Path(path).read_text(encoding="utf-8"), flags=re.S)
    return set(re.findall(r"SYNCQ_PROGRESS_[A-Z_]+", text))


def _named_contracts(header_text, src_root):
    found = []
    for rel in re.findall(r"\bsrc/[a-z0-9_]+/[a-z0-9_]+\.c\b", header_text.split("*/")[0]):
        p = Path(src_root, rel)
        if p.exists() and p not in found:
            found.append(p)
    return found


def contract_file(func, header_path, header_text, src_root):
    """The source file whose contract covers func, declared in header_path
    (include/syncq/<family>/<x>.h), or None."""
    family = Path(header_path).parent.name
    named = _named_contracts(header_text, src_root)
    word = re.compile(r"\b" + re.escape(func) + r"\b")
    if len(named) == 1:
        return named[0]
    mention = [p for p in named if word.search(p.read_text(encoding="utf-8"))]
    if len(mention) == 1:
        return mention[0]
    candidates = [p for p in sorted(Path(src_root, "src", family).glob("*.c")) if contract_block(p) is not None]
    define = re.compile(r"^[A-Za-z_][^;=]*\b" + re.escape(func) + r"\s*\([^;]*$", re.M)
    defining = [p for p in candidates if define.search(p.read_text(encoding="utf-8"))]
    if len(defining) == 1:
        return defining[0]
    same = Path(src_root, "src", family, Path(header_path).stem + ".c")
    return same if same in candidates else None


# Roles by the end of a function's name: (suffix, role). Checked in order.
ROLES = (
    ("_bytes", "size"),
    ("_capacity", "read"), ("_rings_linked", "read"), ("_rings_freed", "read"), ("_skips", "read"),
    ("_audit", "quiescent"), ("_set_eliminate_first", "quiescent"),
    ("_reset", "reset"),
    ("_init", "init"), ("_destroy", "destroy"),
)
# The operations of each family, by the end of their names (longest first).
FAMILY_OPS = {
    "queue": ("_enqueue", "_dequeue"),
    "stack": ("_push", "_pop"),
    "pqueue": ("_insert", "_delete_min"),
    "counter": ("_fetch_add", "_load"),
    "lock": ("_trylock", "_unlock", "_lock"),
    "barrier": ("_wait_timed", "_wait"),
}
_OBJECT = {"queue": "queue", "stack": "stack", "pqueue": "priority queue", "counter": "counter", "lock": "lock",
           "barrier": "barrier"}


# What a typed function does, by family and the last words of its name: the
# first sentence of an entry whose own comment only lists statuses.
SUMMARY = {
    ("queue", "enqueue"): "Append item at the queue's tail.",
    ("queue", "dequeue"): "Take the item at the queue's head into *item.",
    ("stack", "push"): "Push item on the stack.",
    ("stack", "pop"): "Pop the newest item into *item.",
    ("pqueue", "insert"): "Insert payload with priority key.",
    ("pqueue", "delete_min"): "Remove an item of least key into *key and *payload.",
    ("counter", "fetch_add"): "Add delta; *old (if not NULL) gets the value before.",
    ("counter", "load"): "Read the current value into *value.",
    ("lock", "lock"): "Acquire the lock, waiting while another thread holds it.",
    ("lock", "trylock"): "Acquire the lock if no one holds it, without waiting.",
    ("lock", "unlock"): "Release the lock.",
    ("barrier", "wait"): "Arrive as participant id and wait for the episode's other participants.",
    ("barrier", "wait_timed"): "Arrive as participant id and wait, at most timeout_ns, for the others.",
    ("*", "init"): "Initialise the {obj} in the caller's storage.",
    ("*", "destroy"): "Destroy the {obj}, freeing what init allocated (if anything).",
    ("*", "reset"): "Put the {obj} back in the state after init.",
    ("*", "bytes"): "Bytes of storage a {obj} of this capacity needs, into *bytes.",
}


def summary(func, family):
    """The sentence SUMMARY has for func, or None."""
    if family not in FAMILY_OPS:
        return None
    role, verb = role_of(func, family)
    text = SUMMARY.get((family, verb)) or SUMMARY.get(("*", verb if role != "init" else "init"))
    return text.format(obj=_OBJECT[family]) if text else None


def role_of(func, family):
    for suffix in FAMILY_OPS.get(family, ()):
        if func.endswith(suffix):
            return "op", suffix[1:]
    if "_init_" in func:
        return "init", "init"
    for suffix, role in ROLES:
        if func.endswith(suffix):
            return role, suffix[1:]
    return None, None


def _op_concurrency(family, verb, decl, spsc):
    obj = _OBJECT[family]
    if family == "lock":
        if verb == "unlock":
            node = ", with the node it locked with" if "syncq_lock_node" in decl else ""
            return (f"Called by the lock's holder only, once per successful lock or trylock{node}, "
                    "concurrently with other threads' lock and trylock.")
        node = " (each with a node of its own, untouched until its unlock returns)" if "syncq_lock_node" in decl else ""
        return f"Any number of threads may lock and trylock the same lock at the same time{node}."
    if family == "barrier":
        return ("Each participant (id in [0, threads)) calls wait or wait_timed once per episode, at the same "
                "time as the other participants; never two calls with one id at once.")
    ops = {"queue": "enqueue and dequeue", "stack": "push and pop", "pqueue": "insert and delete_min",
           "counter": "fetch_add and load"}[family]
    if spsc:
        return f"One producer and one consumer at a time on the same {obj} ({ops} are single-threaded per side)."
    return f"Any number of threads may call {ops} on the same {obj} at the same time."


def paragraphs(func, decl, header_path, header_text, src_root):
    """(thread_safety, progress) sentences of a typed function, or None when
    its contract or its role is not found."""
    family = Path(header_path).parent.name
    if family not in FAMILY_OPS:
        return None
    path = contract_file(func, header_path, header_text, src_root)
    if path is None:
        return None
    fields = contract_fields(path)
    role, verb = role_of(func, family)
    if role is None and re.search(r"\(\s*const\s+syncq_\w+\s*\*", decl):
        role = "query"  # a verb no rule names, on a const object: it only reads
    if not fields or role is None or "Progress" not in fields:
        return None
    rel = path.relative_to(src_root).as_posix()
    entries = [e for e in registry_entries(src_root, path) if e[4] and e[1]]
    obj = _OBJECT[family]
    if entries:
        names = ", ".join(f'"{e[1]}"' for e in entries)
        first = entries[0]
        query = (f"registry entr{'y' if len(entries) == 1 else 'ies'} {names}: "
                 f'syncq_registry_find({_FAMILY_ENUM[family]}, "{first[1]}", &a) gives a->progress == '
                 f"{first[2]} (syncq_progress_name names it)")
    else:
        query = "not in the registry (no entry to query)"
    if role == "op":
        spsc = any("SYNCQ_PROP_SPSC" in e[3] for e in entries)
        setup = "init, destroy or reset" if family == "barrier" else "init or destroy"
        first = _op_concurrency(family, verb, decl, spsc)
        limited = "Limits" in fields and not fields["Limits"].lower().startswith(("none.", "-"))
        if limited:
            first = first.replace("Any number of threads", "Any number of threads (within the Limits that follow)")
        ts = [first, f"Not concurrently with {setup} of the same {obj}."]
        if limited:
            ts.append(f"Limits: {fields['Limits']}")
        if "Signal-safe" in fields:
            ts.append(f"From a signal handler: {fields['Signal-safe']}")
        if "Process-shared" in fields:
            shared = fields["Process-shared"]
            if family in ("lock", "barrier") and not shared.lower().startswith("no"):
                shared = shared.rstrip(".") + ", initialised with process_shared set in its config."
            ts.append(f"From several processes (the {obj} in shared memory): {shared}")
        if progress_class(fields["Progress"]) == "SYNCQ_PROGRESS_BLOCKING":
            ts.append("From a postoffice fiber: allowed, but while it waits it holds its scheduler thread: the "
                      "fibers queued there, the one it may be waiting for included, run only once the fiber "
                      "system's monitor hands them to a spare thread (after 10 ms; syncq_po_blocking_begin/_end "
                      "hand them off at once)" + ("; never hold the lock across a call that may switch fibers "
                                                  "(recv, yield, join, sleep)." if family == "lock" else "."))
        else:
            ts.append("From a postoffice fiber: yes; within the conditions of its progress guarantee (Progress) it "
                      "does not wait for another thread, so it holds its scheduler thread only for its own steps.")
        text = fields["Progress"].rstrip(".")
        pr = f"{text[:1].upper()}{text[1:]} (contract: {rel}; {query})."
    elif role in ("init", "destroy", "reset", "quiescent"):
        when = {"init": "before any other call on it", "destroy": "after every other call on it has returned",
                "reset": "while no thread waits on it (every waiter has returned)",
                "quiescent": "while no other call runs on it"}[role]
        ts = [f"Call it on a {obj} {when}: it must not run concurrently with any other call on the same {obj} "
              "(calls on different objects are independent)."]
        shared = fields.get("Process-shared", "")
        if role == "init" and shared and not shared.lower().startswith("no"):
            ts.append(f"A {obj} in shared memory is initialised once, by one process, before any other uses it.")
        pr = (f"Not a concurrent operation: it runs alone on the {obj}, with no other call on it to wait for. "
              f"Memory: {fields.get('Memory', 'see the contract')} The operations' progress: "
              f"{progress_class(fields['Progress']) and fields['Progress'].split(' ')[0].rstrip('.;,')} "
              f"(contract: {rel}; {query}).")
    elif role == "size":
        ts = ["Any thread, at any time, from a signal handler too: it reads only its arguments."]
        pr = "Wait-free: arithmetic on its arguments, no shared memory."
    elif role == "read":
        ts = [f"Any thread, concurrently with every call on the same {obj} but init and destroy."]
        pr = "Wait-free: it loads the value (a snapshot: concurrent operations may change it at once)."
    else:  # query
        ts = [f"Any thread, concurrently with every call on the same {obj} but init and destroy (it takes the "
              f"{obj} as const: it only reads)."]
        pr = (f"A read-only query, not one of the operations the contract's progress guarantee covers "
              f"(contract: {rel}); its answer may be stale at once.")
    return " ".join(ts), pr
