/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peers.c — lab_peers_register(): every adapter compiled into this build,
 * in a fixed order, with a status line per library (lab/peers/peers.h).
 *
 * CMake defines SYNCQ_PEER_<LIB> to 1 for each library it found (and
 * compiled the adapter of), to 0 otherwise, with SYNCQ_PEER_<LIB>_ABSENT
 * carrying the reason. Under ThreadSanitizer (SYNCQ_PEERS_TSAN) the
 * libraries whose synchronization TSan cannot see (inline assembly, or a
 * library built without -fsanitize=thread) are not registered: every run
 * would report races that are not there, so the status says so instead.
 */
#include "peers.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "peer_adapter.h"

typedef int (*register_fn)(unsigned flags, char *why, size_t len);

typedef struct peer_lib {
  const char *library;
  const char *package;
  register_fn fn;     /* NULL: not compiled in */
  const char *absent; /* why not compiled in */
  const char *tsan;   /* non-NULL: not run under TSan, and why */
} peer_lib;

#define TSAN_ASM "ThreadSanitizer cannot see its atomics (inline assembly): every run would report false races"
#define TSAN_BOOST                                                                              \
  "boost.lockfree reads nodes that its free list may be recycling with plain loads, by design " \
  "(type-stable nodes, tagged pointers): TSan reports that race on every run"
#define TSAN_FENCES                                                                                  \
  "moodycamel orders its blocks with standalone fences (std::atomic_thread_fence), which TSan does " \
  "not model: it reports races on recycled blocks"
#define TSAN_LIB "its library is not built with -fsanitize=thread: TSan would report false races"

/* The peer libraries, in the order the machine record lists them: X(LIB,
 * name, package, register function, why it is not run under TSan). One
 * row per library; whether it is compiled in comes from CMake
 * (SYNCQ_PEER_<LIB> is 1 or 0, SYNCQ_PEER_<LIB>_ABSENT says why not; see
 * lab/peers/CMakeLists.txt), so the table is written once. */
#define PEER_LIBS(X)                                                                                                   \
  X(CK, "ck", "Debian libck-dev (Concurrency Kit)", lab_peer_ck_register, TSAN_ASM)                                    \
  X(URCU, "urcu", "Debian liburcu-dev (Userspace RCU)", lab_peer_urcu_register, TSAN_ASM)                              \
  X(DPDK, "dpdk", "Debian libdpdk-dev (rte_ring)", lab_peer_dpdk_register, TSAN_LIB)                                   \
  X(BOOST, "boost", "Debian libboost-dev (boost.lockfree)", lab_peer_boost_register, TSAN_BOOST)                       \
  X(TBB, "tbb", "Debian libtbb-dev (oneTBB)", lab_peer_tbb_register, TSAN_LIB)                                         \
  X(MOODYCAMEL, "moodycamel", "Debian libconcurrentqueue-dev", lab_peer_moodycamel_register, TSAN_FENCES)              \
  X(CROSSBEAM, "crossbeam", "librust-crossbeam-queue-dev (or crates.io), built by cargo", lab_peer_crossbeam_register, \
    TSAN_LIB)

/* A library not compiled in has no register function to name: the
 * constant condition selects NULL and the symbol is never referenced. */
#define PEER_ROW(LIB, name, package, fn, tsan)                                                       \
  {name, package, SYNCQ_PEER_##LIB ? fn : NULL, SYNCQ_PEER_##LIB ? NULL : SYNCQ_PEER_##LIB##_ABSENT, \
   SYNCQ_PEER_##LIB ? tsan : NULL},

static const peer_lib libs[] = {PEER_LIBS(PEER_ROW)};

#define N_LIBS (sizeof libs / sizeof libs[0])

static lab_peer_status status[N_LIBS];
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned registered_flags; /* flags of the calls made so far */
static int registered_any;

int peer_add(const syncq_algo *a, int *st) {
  int r = syncq_registry_add(a);
  if (r == SYNCQ_EEXIST) r = SYNCQ_OK;
  if (st != NULL) *st = r;
  return r == SYNCQ_OK;
}

int lab_peers_register(unsigned flags) {
  pthread_mutex_lock(&reg_mutex);
  /* a second call registers only what the first left out (e.g. SPSC) */
  int again = registered_any && (flags & ~registered_flags) == 0;
  int total = 0, err = 0;
  for (size_t i = 0; i < N_LIBS; i++) {
    lab_peer_status *s = &status[i];
    s->library = libs[i].library;
    s->package = libs[i].package;
    if (again) {
      total += s->registered;
      continue;
    }
    if (libs[i].fn == NULL) {
      s->registered = 0;
      snprintf(s->why, sizeof s->why, "absent: %s", libs[i].absent);
      continue;
    }
#ifdef SYNCQ_PEERS_TSAN
    if (libs[i].tsan != NULL) {
      s->registered = 0;
      snprintf(s->why, sizeof s->why, "not run in this ThreadSanitizer build: %s", libs[i].tsan);
      continue;
    }
#endif
    char why[sizeof s->why] = "";
    int n = libs[i].fn(flags, why, sizeof why);
    if (n < 0) {
      err = n;
      n = 0;
    }
    s->registered = n;
    if (n == 0) snprintf(s->why, sizeof s->why, "%s", why[0] ? why : "registered nothing");
    else s->why[0] = '\0';
    total += n;
  }
  registered_any = 1;
  registered_flags |= flags;
  pthread_mutex_unlock(&reg_mutex);
  return err < 0 ? err : total;
}

/* liburcu is the one library with threads of its own that a child needs
 * back (peers.h); the others keep no thread between calls. */
void lab_peers_before_fork(void) {
#if SYNCQ_PEER_URCU
  lab_peer_urcu_before_fork();
#endif
}

void lab_peers_after_fork_parent(void) {
#if SYNCQ_PEER_URCU
  lab_peer_urcu_after_fork_parent();
#endif
}

void lab_peers_after_fork_child(void) {
#if SYNCQ_PEER_URCU
  lab_peer_urcu_after_fork_child();
#endif
}

const char *lab_peers_spsc_note(void) {
  if (registered_flags & LAB_PEERS_SPSC) return NULL;
  return "SPSC peers are validated by the test drivers but not measured: this program registered the peers "
         "without LAB_PEERS_SPSC, which queue-1p1c needs to measure them";
}

size_t lab_peers_status_count(void) { return N_LIBS; }

const lab_peer_status *lab_peers_status_at(size_t i) { return i < N_LIBS ? &status[i] : NULL; }
