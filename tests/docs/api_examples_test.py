#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every man page's EXAMPLE compiles and runs, and the calls a user meets
first have one.

usage: api_examples_test.py SOURCE_DIR MAN_DIR CC LIBSYNCQ_A EXTRA_LIBS
                            [MPICC LIBSYNCQ_AM_MPI_A MPIRUN MPI_OBJECTS_SO]...

The code blocks of a page's EXAMPLE section (an "Example:" paragraph's
`...` spans in the header, docs/api/man_pages.py) are, in order, the body
of a function whose parameters are those of the page's SYNOPSIS: an
example may use the documented function's parameters by their names (q,
self, job, ...), and the few names of the caller's own program that CALLER
declares below; everything else it declares itself. The program includes
the page's header after syncq/syncq.h, is compiled as C11 with warnings as
errors, linked with the library built here and run: a main() made of
FIXTURES gives the parameters values (a queue holding one item for q, a
process of a postoffice system for self, an endpoint with a request
waiting for ep, ...), calls the example, releases what it made and exits
with the example's status. A run must exit 0 within TIMEOUT seconds and
write nothing on stderr (an example reports a failed call there), so an
example with the wrong arguments, a name the API does not have, a wrong
algorithm name, a status it mishandles, a crash or a deadlock fails here.
Each program runs twice: as built, and built with
-fsanitize=address,undefined (the example's own code, and leaks of what
the library allocated for it, checked; the library is the plain one).
A page of syncq/am_mpi.h is compiled with MPICC, linked with the MPI
transport's library and run as a job of two ranks with MPIRUN, once per
MPI given (four arguments each), as built and with the sanitizers. As
built, each rank runs with MPI_OBJECTS_SO preloaded (tests/am/mpi_objects.c:
every MPI object made must be freed by MPI_Finalize, and each rank must
show it ran the check). With the sanitizers, LeakSanitizer leaves out
what the MPI library keeps until exit (lsan_mpi.supp: a stack through its
libraries), so the leaks of syncq's own allocations are still caught; the
MPI objects syncq makes are allocated inside MPI and are the preloaded
check's. Without MPICC, the
transport's library or MPIRUN its examples are reported as not run. At
least RUN_FLOOR examples (those of syncq/am_mpi.h not counted) must run,
so examples cannot stop running unnoticed.

Every function of REQUIRED (each family's create and destroy, its main
operations, the postoffice's, active messages' and the MPI transport's
entry points) must have an EXAMPLE.
Prints every failure and exits 1; 0 when all hold.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
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
            "-Wno-unused-but-set-variable", "-Wno-unused-value", "-Wno-unused-result", "-Wno-unused-function")


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


# The caller's own code that CALLER declares, and what the fixtures use.
# on_ping counts the request a fixture leaves waiting (acks) and ends the
# caller's poll loop (running).
HARNESS = r"""
#define CHECK(call)                                                                     \
  do {                                                                                  \
    int harness_r_ = (call);                                                            \
    if (harness_r_ != SYNCQ_OK) {                                                       \
      fprintf(stderr, "fixture: %s: %s\n", #call, syncq_strerror(harness_r_));          \
      exit(3);                                                                          \
    }                                                                                   \
  } while (0)
void work(void) {}
void compute(int step, unsigned id) { (void)step; (void)id; }
void handle(syncq_po_msg *m) { (void)m; }
void worker(syncq_po_proc *self, void *arg) { (void)self; (void)arg; }
int main_process(syncq_po_proc *self, void *arg) { (void)self; (void)arg; return 0; }
void on_ping(syncq_am_token *token, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  (void)token; (void)args; (void)nargs; (void)data; (void)len; (void)ctx;
  acks++;
  running = false;
}
syncq_am_endpoint *my_ep;
syncq_am_peer *p;
bool running;
unsigned acks, sent;
static char harness_item[] = "item";
static syncq_po_system *harness_sys;
static syncq_po_pid harness_target, harness_spawned;
static bool harness_joins;
static syncq_am_endpoint *harness_ep;

/* An endpoint of this run's own name (another run's is another name); a
 * segment a crashed run left under it is removed first. */
static void harness_am_create(const char *name, syncq_am_endpoint **ep) {
  int r = syncq_am_create(name, NULL, ep);
  if (r == SYNCQ_EEXIST && syncq_am_unlink(name) == SYNCQ_OK) r = syncq_am_create(name, NULL, ep);
  CHECK(r);
}
/* The name syncq_am_create's example gives its server: its creator's pid
 * in it (syncq_am_connect's example, a client the server forked, finds it
 * from its parent's). */
static const char *harness_server_of(long pid) {
  static char name[48];
  snprintf(name, sizeof name, "syncq-example-%ld-server", pid);
  return name;
}
/* harness_ep (named server, or after this process) with handler 1 on_ping,
 * and my_ep connected to it as p. */
static void harness_am_up(const char *server) {
  char name[2][48];
  snprintf(name[0], sizeof name[0], "syncq-api-example-%ld", (long)getpid());
  snprintf(name[1], sizeof name[1], "syncq-api-example-%ld-client", (long)getpid());
  harness_am_create(server ? server : name[0], &harness_ep);
  CHECK(syncq_am_register(harness_ep, 1, "ping", on_ping, NULL));
  harness_am_create(name[1], &my_ep);
  CHECK(syncq_am_connect(my_ep, syncq_am_name(harness_ep), &p));
}
/* A request for on_ping waits at harness_ep: a poll loop has one to run. */
static void harness_am_ping(void) {
  uint32_t word = 1;
  CHECK(syncq_am_request(p, 1, &word, 1, 0));
  sent = 1;
  running = true;
}
static void harness_am_down(void) {
  CHECK(syncq_am_disconnect(p));
  CHECK(syncq_am_destroy(my_ep));
  CHECK(syncq_am_destroy(harness_ep));
}
/* A one-byte message from self to `to`. */
static void harness_post(syncq_po_proc *self, syncq_po_pid to) {
  syncq_po_msg *m;
  CHECK(syncq_po_get(self, 1, &m));
  m->len = 1;
  CHECK(syncq_po_send(self, to, m, SYNCQ_PO_LINK));
}
/* Sends harness_target two messages, then kills it (reason 1): its
 * receive loop ends with SYNCQ_EKILLED. */
static void harness_killer(syncq_po_proc *self, void *arg) {
  (void)arg;
  harness_post(self, harness_target);
  harness_post(self, harness_target);
  CHECK(syncq_po_exit(self, harness_target, 1));
}
static void harness_po_destroy(syncq_po_system *sys) {
  int r;
  while ((r = syncq_po_destroy(sys)) == SYNCQ_EBUSY) syncq_yield(); /* a detached process still exiting */
  CHECK(r);
}
"""

# What main gives a parameter (by its declaration in the SYNOPSIS): the
# statements that declare and set it, and those that release it after the
# example. A parameter not here is zero (an output the example does not
# use: it declares its own).
DRAIN = "{{ void *harness_out; while (syncq_{f}(%s, &harness_out) == SYNCQ_OK) {{}} }}"
FIXTURES = {
    "syncq_queue *q": ('syncq_queue *q; CHECK(syncq_queue_create("ms", 0, &q)); '
                       "CHECK(syncq_queue_enqueue(q, harness_item));",
                       DRAIN.format(f="queue_dequeue") % "q" + " CHECK(syncq_queue_destroy(q));"),
    "const syncq_queue *q": ('syncq_queue *q; CHECK(syncq_queue_create("ms", 0, &q));',
                             "CHECK(syncq_queue_destroy(q));"),
    "syncq_stack *s": ('syncq_stack *s; CHECK(syncq_stack_create("treiber", NULL, &s)); '
                       "CHECK(syncq_stack_push(s, harness_item));",
                       DRAIN.format(f="stack_pop") % "s" + " CHECK(syncq_stack_destroy(s));"),
    "syncq_pqueue *q": ('syncq_pqueue *q; CHECK(syncq_pqueue_create("linden-jonsson", NULL, &q)); '
                        "CHECK(syncq_pqueue_insert(q, 1, harness_item));",
                        "{ uint64_t harness_key; void *harness_out; "
                        "while (syncq_pqueue_delete_min(q, &harness_key, &harness_out) == SYNCQ_OK) {} } "
                        "CHECK(syncq_pqueue_destroy(q));"),
    "syncq_counter *c": ('syncq_counter *c; CHECK(syncq_counter_create("faa", 0, &c));',
                         "CHECK(syncq_counter_destroy(c));"),
    "syncq_lock *l": ("syncq_lock *l; CHECK(syncq_lock_create(SYNCQ_LOCK_DEFAULT, NULL, &l));",
                      "CHECK(syncq_lock_destroy(l));"),
    "syncq_barrier *b": ('syncq_barrier_config harness_cfg = {1, 0, false}; syncq_barrier *b; '
                         'CHECK(syncq_barrier_create("central-faa", &harness_cfg, &b));',
                         "CHECK(syncq_barrier_destroy(b));"),
    "void *item": ("void *item = harness_item;", ""),
    "_Atomic(uint64_t) *p": ("static _Atomic(uint64_t) harness_word = 3; _Atomic(uint64_t) *p = &harness_word;", ""),
    "const void *p": ("const void *p = harness_item;", ""),
    # the postoffice: a system for sys (plain main), the caller's own pid
    # to send to (a process's main)
    "syncq_po_system *sys": ("CHECK(syncq_po_create(NULL, &harness_sys)); syncq_po_system *sys = harness_sys;",
                             "harness_po_destroy(harness_sys);"),
    "syncq_po_pid to": ("syncq_po_pid to = syncq_po_pid_of(self);", ""),
    # active messages
    "syncq_am_endpoint *ep": ("harness_am_up(NULL); harness_am_ping(); syncq_am_endpoint *ep = harness_ep;",
                              "harness_am_down();"),
    # the client of syncq_am_connect's example: its server is this
    # program's parent's (the server forked it)
    "syncq_am_endpoint *self": ("harness_am_up(harness_server_of((long)getppid())); syncq_am_endpoint *self = my_ep;",
                                "harness_am_down();"),
    "syncq_am_peer *peer": ("harness_am_up(NULL); syncq_am_peer *peer = p;", "harness_am_down();"),
}

# Fixtures of one page only: {page: {parameter: (setup, release)}}, and
# what a page's main (or process) sets up before its parameters.
PAGE_FIXTURES = {
    "syncq_lock_destroy": {"syncq_lock *l": (FIXTURES["syncq_lock *l"][0], "")},  # the example destroys it
    # a registered name needs a live process: the main thread, attached
    "syncq_po_register": {"syncq_po_pid pid": ("syncq_po_proc *harness_self; "
                                               "CHECK(syncq_po_attach(sys, &harness_self)); "
                                               "syncq_po_pid pid = syncq_po_pid_of(harness_self);",
                                               "CHECK(syncq_po_detach(harness_self));")},
    # a process that exits (worker returns at once), joined after the run
    "syncq_po_link": {"syncq_po_pid pid": ("syncq_po_pid pid; CHECK(syncq_po_spawn(harness_sys, worker, NULL, &pid)); "
                                           "harness_spawned = pid; harness_joins = true;", "")},
    # a server with one client connected (its peer table's slot 0)
    "syncq_am_sender_check": {"const syncq_am_endpoint *ep": ("harness_am_up(NULL); "
                                                              "const syncq_am_endpoint *ep = harness_ep;",
                                                              "harness_am_down();")},
}
PAGE_FIXTURES["syncq_po_monitor"] = PAGE_FIXTURES["syncq_po_link"]
POST_SELF = "harness_post(self, syncq_po_pid_of(self));"
PAGE_SETUP = {
    "syncq_po_free": POST_SELF,
    "syncq_po_recv_blocking": POST_SELF,
    "syncq_po_recv_timeout": POST_SELF,
    # the name the example creates, left by a run that crashed (SYNCQ_ENOENT
    # when there is none)
    "syncq_am_create": "syncq_am_unlink(harness_server_of((long)getpid()));",
    # a server loop: it ends when the process is killed
    "syncq_po_recv": "harness_target = syncq_po_pid_of(self); "
                     "CHECK(syncq_po_spawn(harness_sys, harness_killer, NULL, &harness_spawned)); "
                     "harness_joins = true;",
}

# Fixtures of a page of syncq/am_mpi.h: the job of each rank. The example
# of destroy finalises MPI itself.
MPI_FIXTURES = {
    "syncq_am_mpi *job": ("syncq_am_mpi *job; CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job)); "
                          "CHECK(syncq_am_mpi_start(job));", "CHECK(syncq_am_mpi_destroy(job));"),
    "const syncq_am_mpi *job": ("syncq_am_mpi *job; CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job)); "
                                "CHECK(syncq_am_mpi_start(job));", "CHECK(syncq_am_mpi_destroy(job));"),
}
MPI_PAGE_FIXTURES = {
    "syncq_am_mpi_start": {"syncq_am_mpi *job": ("syncq_am_mpi *job; "
                                                 "CHECK(syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job));",
                                                 "CHECK(syncq_am_mpi_destroy(job));")},
    "syncq_am_mpi_destroy": {"syncq_am_mpi *job": (MPI_FIXTURES["syncq_am_mpi *job"][0], "")},
    # Its example names every peer found lost, and a peer that has begun
    # its destroy is one ("left the job"): the ranks meet after the
    # example, polling (a rank's requests may wait on the other's poll),
    # before either destroys.
    "syncq_am_mpi_peer_why": {"const syncq_am_mpi *job": (
        MPI_FIXTURES["const syncq_am_mpi *job"][0],
        "MPI_Request harness_met; CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &harness_met) == MPI_SUCCESS ? SYNCQ_OK : "
        "SYNCQ_ESYS); for (int harness_done = 0; !harness_done;) { "
        "CHECK(syncq_am_poll(syncq_am_mpi_endpoint(job), 8, NULL)); "
        "CHECK(MPI_Test(&harness_met, &harness_done, MPI_STATUS_IGNORE) == MPI_SUCCESS ? SYNCQ_OK : SYNCQ_ESYS); } "
        "CHECK(syncq_am_mpi_destroy(job));")},
}

TIMEOUT = 10  # seconds a run may take
# An MPI job under the sanitizers runs MPI's start-up with every
# allocation's stack taken by the slow unwinder (MPI_LSAN): it may take
# SANITIZED_SLOWDOWN times a plain run's limit. Measured on 2 cores at a
# load of 58 (docs/am-mpi.md, "Tests"): a plain MPI example 0.2-0.9 s, so
# TIMEOUT leaves 11x; sanitized, Open MPI's 3.7-5.2 s (6-8x its plain
# run), MPICH's 0.9-1.2 s (2-3x); 3 x TIMEOUT = 30 s leaves 5.7x over the
# longest.
SANITIZED_SLOWDOWN = 3
TIMEOUT_MPI_SANITIZED = TIMEOUT * SANITIZED_SLOWDOWN
# The MPI jobs' LeakSanitizer settings: the MPI library's own allocations
# suppressed, found by a frame of its libraries in their stacks, which the
# fast unwinder loses at the frames of plugins Open MPI has unloaded by
# exit; the list of suppressions used is not printed (stderr must stay
# empty).
MPI_LSAN = {"ASAN_OPTIONS": "fast_unwind_on_malloc=0",
            "LSAN_OPTIONS": f"suppressions={Path(__file__).resolve().parent / 'lsan_mpi.supp'}:print_suppressions=0"}
# Examples that must run (those of syncq/am_mpi.h not counted): fewer means
# a page lost its example or this test stopped running some.
RUN_FLOOR = 56
MPI_RANKS = 2  # ranks of an MPI example's job
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")


def split_params(params):
    """[(declaration, name)] of a parameter list "(type a, type b)"."""
    inner = params[1:-1].strip()
    if inner in ("", "void"):
        return []
    out, depth, cur = [], 0, ""
    for ch in inner + ",":
        if ch == "," and depth == 0:
            decl = " ".join(cur.split())
            out.append((decl, re.findall(r"\w+", decl)[-1]))
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out


def program(header, name, params, code, mpi=False):
    """The example as a function, and a main that calls it with FIXTURES."""
    text = ("#define _POSIX_C_SOURCE 200809L\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n"
            "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n#include <syncq/syncq.h>\n"
            f"#include <{header}>\n{CALLER}\n"
            f"int example_of_{name}{params};\n"
            f"int example_of_{name}{params} {{\n  {{\n{code}\n  }}\n  return 0;\n}}\n{HARNESS}\n")
    fixtures = dict(MPI_FIXTURES if mpi else FIXTURES)
    fixtures.update((MPI_PAGE_FIXTURES if mpi else PAGE_FIXTURES).get(name, {}))
    args = split_params(params)
    in_process = ("syncq_po_proc *self", "self") in args
    setup, release = [], []
    for decl, arg in args:
        if in_process and arg == "self":
            continue
        if decl in fixtures:
            made, freed = fixtures[decl]
        else:
            made, freed = f"{decl}; memset(&{arg}, 0, sizeof {arg});", ""
        setup.append(made)
        release.insert(0, freed)
    call = f"example_of_{name}({', '.join(arg for _decl, arg in args)})"
    body = "\n  ".join(s for s in setup if s)
    after = "\n  ".join(s for s in release if s)
    if mpi:
        return text + (f"int main(int argc, char **argv) {{\n  int provided;\n"
                       f"  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);\n  {body}\n"
                       f"  int rc = {call};\n  {after}\n"
                       "  int finalized;\n  MPI_Finalized(&finalized);\n  if (!finalized) MPI_Finalize();\n"
                       "  return rc;\n}\n")
    if not in_process:
        return text + (f"int main(void) {{\n  {PAGE_SETUP.get(name, '')}\n  {body}\n  int rc = {call};\n  {after}\n"
                       "  return rc;\n}\n")
    # the example runs in the first process of a postoffice system
    return text + (f"static int harness_rc = -1;\n"
                   f"static int harness_main(syncq_po_proc *self, void *arg) {{\n  (void)arg;\n"
                   f"  {PAGE_SETUP.get(name, '')}\n  {body}\n  harness_rc = {call};\n  {after}\n  return 0;\n}}\n"
                   "int main(void) {\n  CHECK(syncq_po_create(NULL, &harness_sys));\n"
                   "  CHECK(syncq_po_run(harness_sys, harness_main, NULL, NULL));\n"
                   "  if (harness_joins) CHECK(syncq_po_join(harness_sys, harness_spawned));\n"
                   "  harness_po_destroy(harness_sys);\n  return harness_rc;\n}\n")


def run_one(job):
    """Build and run one example (as built, then with the sanitizers):
    the failure's text, or None."""
    stem, compiler, libs, launcher, source, code, workdir, include, objects = job
    c = Path(workdir) / f"{stem}.c"
    c.write_text(source, encoding="utf-8")
    where = f" under {Path(launcher[0]).name}" if launcher else ""
    for variant, flags in (("", ()), ("-asan", SANITIZE)):
        exe = Path(workdir) / f"{stem}{variant}"
        build = subprocess.run([compiler, "-std=c11", *WARNINGS, *flags, "-I", include, "-o", str(exe),
                                str(c), *libs, "-pthread"], capture_output=True, text=True)
        if build.returncode != 0:
            how = f" with {' '.join(flags)}" if flags else ""
            return f"{stem}(3): its EXAMPLE does not compile{how}:\n{code}\n{build.stderr}"
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1")
        timeout = TIMEOUT
        run = [*launcher, str(exe)]
        tally = None
        if launcher and flags:
            env["ASAN_OPTIONS"] += ":" + MPI_LSAN["ASAN_OPTIONS"]
            env["LSAN_OPTIONS"] = MPI_LSAN["LSAN_OPTIONS"]
            timeout = TIMEOUT_MPI_SANITIZED
        elif launcher:
            # the MPI objects check, in the ranks only (not in mpirun);
            # not with the sanitizers, whose runtime must load first
            tally = Path(tempfile.mkdtemp(dir=workdir))
            env["SYNCQ_MPI_OBJECTS_OUT"] = str(tally)
            run = [*launcher, "env", f"LD_PRELOAD={objects}", str(exe)]
        # Active-message endpoints are system-wide names: each example's
        # and fixture's carries a pid (the example's, its parent's, or an
        # MPI job's), so examples run side by side, and beside other tests.
        try:
            ran = subprocess.run(run, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)
        except subprocess.TimeoutExpired:
            return (f"{stem}(3): its EXAMPLE{variant and ' (sanitizers)'}{where} did not end within {timeout:g} s"
                    f":\n{code}")
        err = ran.stderr.strip()
        if ran.returncode != 0 or err:
            return (f"{stem}(3): its EXAMPLE{variant and ' (sanitizers)'}{where} exits {ran.returncode}"
                    f"{', writing on stderr' if err else ''}:\n{code}\n{ran.stdout}{ran.stderr}")
        if tally is not None:
            for rank in range(MPI_RANKS):
                mark = tally / f"mpi_objects.{rank}"  # "made N left M", written at MPI_Finalize
                seen = mark.read_text().split() if mark.exists() else []
                if len(seen) != 4 or seen[1] == "0":
                    return (f"{stem}(3): its EXAMPLE{where}: rank {rank} did not run the MPI objects check "
                            f"({objects} preloaded), or saw no MPI object made: {' '.join(seen) or 'no tally'}")
    return None


def main():
    src, man_dir, cc, lib = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    include = str(src / "include")
    libs = [lib, *shlex.split(sys.argv[5])] if len(sys.argv) > 5 else [lib]
    # per MPI: (MPICC, LIBSYNCQ_AM_MPI_A, MPIRUN, MPI_OBJECTS_SO)
    mpis = [tuple(sys.argv[i:i + 4]) for i in range(6, len(sys.argv) - 3, 4) if all(sys.argv[i:i + 4])]
    failed = 0
    not_run = []
    with_example = set()
    jobs = []
    tmp = tempfile.TemporaryDirectory()
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
        # a page's blocks are one example, in order (a later block uses
        # what an earlier one declared)
        code = "\n".join(blocks)
        if header == "syncq/am_mpi.h":
            if not mpis:
                not_run.append(page.stem)
                continue
            for mpicc, mpi_lib, mpirun, objects in mpis:
                # Open MPI: as tests/am/mpi_run.sh starts it (vader's single
                # copy needs ptrace rights containers often lack)
                ompi = ["--allow-run-as-root", "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"]
                launcher = [mpirun, "-n", str(MPI_RANKS), *(ompi if "openmpi" in mpirun else [])]
                workdir = Path(tmp.name) / Path(mpirun).name  # each MPI's programs apart
                workdir.mkdir(exist_ok=True)
                jobs.append((page.stem, mpicc, [mpi_lib, *libs[1:]], launcher,
                             program(header, page.stem, params, code, True), code, str(workdir), include, objects))
        else:
            jobs.append((page.stem, cc, libs, [], program(header, page.stem, params, code), code, tmp.name, include,
                         None))
    # two at a time: a compile and a run overlap; the examples' own threads
    # are few
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run_one, jobs))
    tmp.cleanup()
    for result in results:
        if result:
            print(f"FAIL: {result}")
            failed += 1
    ran = sum(1 for job in jobs if not job[3])  # those run without an MPI launcher
    for name in REQUIRED:
        if not (man_dir / f"{name}.3").exists():
            print(f"FAIL: {name}: no man page")
            failed += 1
        elif name not in with_example:
            print(f"FAIL: {name}(3) has no EXAMPLE")
            failed += 1
    if not_run:
        print(f"not run (no MPI compiler, transport library or launcher): {', '.join(not_run)}")
    if ran < RUN_FLOOR:
        print(f"FAIL: {ran} EXAMPLEs ran, fewer than the {RUN_FLOOR} that must (syncq/am_mpi.h's not counted)")
        failed += 1
    print(f"{len(jobs)} EXAMPLEs compiled and run: {ran} as built and with {SANITIZE[0]} (at least {RUN_FLOOR} "
          f"must), {len(jobs) - ran} of syncq/am_mpi.h as an MPI job of {MPI_RANKS} ranks ({len(mpis)} MPIs), as built "
          f"(MPI objects checked) and with the sanitizers; "
          f"{failed} failures; "
          f"{len(REQUIRED)} entry points required to have one")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
