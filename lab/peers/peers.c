/*
 * peers.c — lab_peers_register(): every adapter compiled into this build,
 * in a fixed order, with a status line per library (lab/peers/peers.h).
 *
 * CMake defines SYNCQ_PEER_<LIB> for each library it found (and compiled
 * the adapter of); SYNCQ_PEER_<LIB>_ABSENT carries the reason when it did
 * not. Under ThreadSanitizer (SYNCQ_PEERS_TSAN) the libraries whose
 * synchronization TSan cannot see (inline assembly, or a library built
 * without -fsanitize=thread) are not registered: every run would report
 * races that are not there, so the status says so instead.
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
  register_fn fn;      /* NULL: not compiled in */
  const char *absent;  /* why not compiled in */
  const char *tsan;    /* non-NULL: not run under TSan, and why */
} peer_lib;

#ifndef SYNCQ_PEER_CK_ABSENT
#define SYNCQ_PEER_CK_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_URCU_ABSENT
#define SYNCQ_PEER_URCU_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_DPDK_ABSENT
#define SYNCQ_PEER_DPDK_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_BOOST_ABSENT
#define SYNCQ_PEER_BOOST_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_TBB_ABSENT
#define SYNCQ_PEER_TBB_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_MOODYCAMEL_ABSENT
#define SYNCQ_PEER_MOODYCAMEL_ABSENT "not found at configure time"
#endif
#ifndef SYNCQ_PEER_CROSSBEAM_ABSENT
#define SYNCQ_PEER_CROSSBEAM_ABSENT "not found at configure time"
#endif

#define TSAN_ASM "ThreadSanitizer cannot see its atomics (inline assembly): every run would report false races"
#define TSAN_BOOST                                                                                   \
  "boost.lockfree reads nodes that its free list may be recycling with plain loads, by design "        \
  "(type-stable nodes, tagged pointers): TSan reports that race on every run"
#define TSAN_FENCES                                                                                  \
  "moodycamel orders its blocks with standalone fences (std::atomic_thread_fence), which TSan does "  \
  "not model: it reports races on recycled blocks"
#define TSAN_LIB "its library is not built with -fsanitize=thread: TSan would report false races"

static const peer_lib libs[] = {
#ifdef SYNCQ_PEER_CK
  {"ck", "Debian libck-dev (Concurrency Kit)", lab_peer_ck_register, NULL, TSAN_ASM},
#else
  {"ck", "Debian libck-dev (Concurrency Kit)", NULL, SYNCQ_PEER_CK_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_URCU
  {"urcu", "Debian liburcu-dev (Userspace RCU)", lab_peer_urcu_register, NULL, TSAN_ASM},
#else
  {"urcu", "Debian liburcu-dev (Userspace RCU)", NULL, SYNCQ_PEER_URCU_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_DPDK
  {"dpdk", "Debian libdpdk-dev (rte_ring)", lab_peer_dpdk_register, NULL, TSAN_LIB},
#else
  {"dpdk", "Debian libdpdk-dev (rte_ring)", NULL, SYNCQ_PEER_DPDK_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_BOOST
  {"boost", "Debian libboost-dev (boost.lockfree)", lab_peer_boost_register, NULL, TSAN_BOOST},
#else
  {"boost", "Debian libboost-dev (boost.lockfree)", NULL, SYNCQ_PEER_BOOST_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_TBB
  {"tbb", "Debian libtbb-dev (oneTBB)", lab_peer_tbb_register, NULL, TSAN_LIB},
#else
  {"tbb", "Debian libtbb-dev (oneTBB)", NULL, SYNCQ_PEER_TBB_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_MOODYCAMEL
  {"moodycamel", "Debian libconcurrentqueue-dev", lab_peer_moodycamel_register, NULL, TSAN_FENCES},
#else
  {"moodycamel", "Debian libconcurrentqueue-dev", NULL, SYNCQ_PEER_MOODYCAMEL_ABSENT, NULL},
#endif
#ifdef SYNCQ_PEER_CROSSBEAM
  {"crossbeam", "librust-crossbeam-queue-dev (or crates.io), built by cargo", lab_peer_crossbeam_register, NULL, TSAN_LIB},
#else
  {"crossbeam", "librust-crossbeam-queue-dev (or crates.io), built by cargo", NULL, SYNCQ_PEER_CROSSBEAM_ABSENT, NULL},
#endif
};

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

const char *lab_peers_spsc_note(void) {
  if (registered_flags & LAB_PEERS_SPSC) return NULL;
  return "SPSC peers (ck:ring_spsc, boost:spsc_queue) are validated by the test drivers but not measured: "
         "ms98-queue runs every registered queue with several producers and does not skip SYNCQ_PROP_SPSC yet";
}

size_t lab_peers_status_count(void) { return N_LIBS; }

const lab_peer_status *lab_peers_status_at(size_t i) { return i < N_LIBS ? &status[i] : NULL; }
