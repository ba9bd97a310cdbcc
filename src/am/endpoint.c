/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * endpoint.c — the endpoint segment's life: creation, attachment by name,
 * the peer table, orderly and crash clean-up; the choice of a segment's
 * claim (its ops table) for the endpoint and each peer (layer 4 of
 * src/am, see am_segment.h).
 *
 * Contract
 *   Source:      000 §2, Figure 1 (one queue block per endpoint, statically
 *                allocated in a shared segment: two destination queues,
 *                each a packet queue with one cache line per packet and a
 *                shorter bulk queue of cache-aligned blocks). POSIX
 *                shm_open replaces 000's System V segment, so endpoints
 *                have names.
 *   Progress:    create / connect / destroy make system calls; the peer
 *                table is claimed by CAS (lock-free); a sender check
 *                (syncq_am_sender_check) maps one page of the client's
 *                segment and reads /proc.
 *   Memory:      the segment: header + 64 peer slots + per queue
 *                (packets x 64 B + blocks x (64 B + bulk_size)); with the
 *                defaults 293 KiB, the size 000 reports. Handles are
 *                malloc'ed in the process.
 *   Signal-safe: no.
 *   Process-shared: the segment, by construction (offsets only).
 *   Limits:      SYNCQ_AM_* in syncq/am.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "am_claim.h"
#include "am_internal.h"
#include "am_segment.h"
#include "syncq/clock.h"

#define AM_PATH_MAX (SYNCQ_AM_NAME_MAX + 2)
#define AM_ATTACH_WAIT_NS 200000000ull /* a segment being created gets this long to become valid */
#define AM_ATTACH_POLL_NS 1000000ull

/* ---------------------------------------------------------------- names */

bool am_name_ok(const char *name) {
  if (name == NULL || name[0] == '\0' || name[0] == '.') return false;
  size_t n = 0;
  for (const char *c = name; *c; c++, n++) {
    if (n >= SYNCQ_AM_NAME_MAX) return false;
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-';
    if (!ok) return false;
  }
  return true;
}

static void shm_path(const char *name, char out[AM_PATH_MAX]) { snprintf(out, AM_PATH_MAX, "/%s", name); }

/* The claims' ops tables, by syncq_am_claim: chosen here once, at creation
 * and at connect, from the geometry this process validated. */
static const am_claim_ops *const claim_ops[SYNCQ_AM_CLAIM_COUNT] = {
  [SYNCQ_AM_CLAIM_TAS] = &am_claim_tas,           [SYNCQ_AM_CLAIM_TTAS] = &am_claim_ttas,
  [SYNCQ_AM_CLAIM_TICKET] = &am_claim_ticket,     [SYNCQ_AM_CLAIM_ANDERSON] = &am_claim_anderson,
  [SYNCQ_AM_CLAIM_POSIX] = &am_claim_posix_mutex, [SYNCQ_AM_CLAIM_LOCKFREE] = &am_claim_lockfree,
};

const char *syncq_am_claim_name(int claim) {
  return claim >= 0 && claim < SYNCQ_AM_CLAIM_COUNT ? claim_ops[claim]->name : NULL;
}

int syncq_am_claim_find(const char *name, syncq_am_claim *out) {
  if (name == NULL || out == NULL) return SYNCQ_EINVAL;
  for (int i = 0; i < SYNCQ_AM_CLAIM_COUNT; i++)
    if (strcmp(name, claim_ops[i]->name) == 0) {
      *out = (syncq_am_claim)i;
      return SYNCQ_OK;
    }
  return SYNCQ_ENOENT;
}

/* ---------------------------------------------------------------- create */

/* Fault a mapped segment's pages in, writable, now: otherwise each packet's
 * and bulk block's first use after create or connect takes a page fault
 * (1-2 us here) in the middle of a send or a poll, until the queues have
 * cycled once. The segment is the endpoint's whole working set, so this
 * only moves the memory's commitment to create and connect, and a
 * /dev/shm (tmpfs) too full to hold the segment is found here, where the
 * first touch of a page it cannot hold would raise SIGBUS in a send or a
 * poll: false then (EFAULT: a page could not be had; ENOMEM). A kernel
 * without MADV_POPULATE_WRITE (before Linux 5.14, EINVAL) faults the pages
 * in as they are used, as before: true. Only called with a size the
 * geometry checked (at most the largest layout am_geometry_valid accepts). */
static bool am_prefault(void *base, size_t size) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(base, size, MADV_POPULATE_WRITE) != 0 && (errno == EFAULT || errno == ENOMEM)) return false;
#else
  (void)base;
  (void)size;
#endif
  return true;
}

int syncq_am_create(const char *name, const syncq_am_config *cfg, syncq_am_endpoint **out) {
  if (out == NULL || !am_name_ok(name)) return SYNCQ_EINVAL;
  syncq_am_config c = cfg ? *cfg : (syncq_am_config){0};
  if (c.claim < 0 || c.claim >= SYNCQ_AM_CLAIM_COUNT) return SYNCQ_EINVAL;
  if (c.packets == 0) c.packets = SYNCQ_AM_DEFAULT_PACKETS;
  if (c.bulk_blocks == 0) c.bulk_blocks = SYNCQ_AM_DEFAULT_BULK_BLOCKS;
  if (c.bulk_size == 0) c.bulk_size = SYNCQ_AM_BULK_MAX;
  if (c.stale_claim_ns == 0) c.stale_claim_ns = SYNCQ_AM_DEFAULT_STALE_NS;
  if (!am_pow2(c.packets) || c.packets < 2 || c.packets > SYNCQ_AM_MAX_PACKETS) return SYNCQ_EINVAL;
  if (!am_pow2(c.bulk_blocks) || c.bulk_blocks > SYNCQ_AM_MAX_BULK_BLOCKS) return SYNCQ_EINVAL;
  if (c.bulk_size % SYNCQ_CACHELINE != 0 || c.bulk_size > SYNCQ_AM_BULK_MAX) return SYNCQ_EINVAL;

  /* aligned: its polling words have a cache line of their own
   * (am_internal.h); the size is a multiple of the alignment */
  syncq_am_endpoint *ep = aligned_alloc(SYNCQ_CACHELINE, sizeof *ep);
  if (ep == NULL) return SYNCQ_ENOMEM;
  memset(ep, 0, sizeof *ep);
  am_layout l;
  am_layout_of(c.packets, c.bulk_blocks, c.bulk_size, &l);
  char path[AM_PATH_MAX];
  shm_path(name, path);
  int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    free(ep);
    errno = e;
    return e == EEXIST ? SYNCQ_EEXIST : SYNCQ_ESYS;
  }
  void *base = MAP_FAILED;
  if (ftruncate(fd, (off_t)l.size) == 0) base = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(path);
    free(ep);
    errno = e;
    return SYNCQ_ESYS;
  }
  if (!am_prefault(base, l.size)) { /* /dev/shm cannot hold it */
    munmap(base, l.size);
    shm_unlink(path);
    free(ep);
    errno = ENOMEM;
    return SYNCQ_ENOMEM;
  }
  /* ftruncate zero-filled the segment: peer slots are FREE, counters 0 */
  am_header *h = base;
  h->version = AM_VERSION;
  h->claim = c.claim;
  h->packets = c.packets;
  h->packet_shift = (uint32_t)__builtin_ctz(c.packets);
  h->bulk_blocks = c.bulk_blocks;
  h->bulk_size = c.bulk_size;
  h->stale_ns = c.stale_claim_ns;
  h->size = l.size;
  h->peers_off = l.peers_off;
  snprintf(h->name, sizeof h->name, "%s", name);
  uint32_t pid;
  uint64_t start;
  am_self_identity(&pid, &start);
  h->creator_pid = (int32_t)pid;
  h->creator_start = start;
  int r = SYNCQ_OK;
  for (int qi = 0; qi < AM_NQUEUES && r == SYNCQ_OK; qi++) {
    h->queue_off[qi] = l.queue_off[qi];
    am_queue *q = am_at(base, l.queue_off[qi]);
    q->packets_off = l.packets_off[qi];
    q->bulk_slots_off = l.slots_off[qi];
    q->bulk_data_off = l.data_off[qi];
    atomic_init(&q->tail, 0u);
    atomic_init(&q->bulk_tail, 0u);
    atomic_init(&q->head, 0u);
    am_packet *p = am_packets(base, q);
    for (uint32_t i = 0; i < c.packets; i++) atomic_init(&p[i].state, am_state(i, 0, AM_FREE));
    am_bulk_slot *bs = am_bulk_slots(base, q);
    for (uint32_t i = 0; i < c.bulk_blocks; i++) atomic_init(&bs[i].state, am_state(i, 0, AM_FREE));
    r = claim_ops[c.claim]->init(q);
  }
  if (r != SYNCQ_OK) {
    munmap(base, l.size);
    shm_unlink(path);
    free(ep);
    return r;
  }
  /* release: pairs with the acquire load of magic in am_map — an attacher
   * that sees the magic sees the whole initialised block */
  atomic_store_explicit(&h->magic, AM_MAGIC, memory_order_release);
  ep->base = base;
  ep->size = l.size;
  am_geometry_read(base, l.size, &ep->geo);
  ep->claim = claim_ops[c.claim];
  ep->owner = (pid_t)pid;
  ep->sleep_after_ns = SYNCQ_AM_WAIT_YIELD_NS;
  ep->sleep_slice_ns = SYNCQ_AM_WAIT_SLEEP_SLICE_NS;
  snprintf(ep->name, sizeof ep->name, "%s", name);
  *out = ep;
  return SYNCQ_OK;
}

int syncq_am_destroy(syncq_am_endpoint *ep) {
  if (ep == NULL || ep->owner != getpid()) return SYNCQ_EINVAL;
  am_header *h = ep->base;
  atomic_store(&h->closed, AM_CLOSED); /* senders that look see SYNCQ_EDEAD */
  for (unsigned i = 0; i < SYNCQ_AM_MAX_PEERS; i++)
    if (ep->reply_peer[i]) (void)syncq_am_disconnect(ep->reply_peer[i]);
  char path[AM_PATH_MAX];
  shm_path(ep->name, path);
  munmap(ep->base, ep->size);
  int r = shm_unlink(path) == 0 || errno == ENOENT ? SYNCQ_OK : SYNCQ_ESYS;
  free(ep);
  return r;
}

/* ---------------------------------------------------------------- attach */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Map the segment at fd; wait a little for a creator still initialising. */
static int map_fd(int fd, void **base, size_t *size, am_geometry *geo) {
  uint64_t deadline = now_ns() + AM_ATTACH_WAIT_NS;
  for (;;) {
    struct stat st;
    if (fstat(fd, &st) != 0) return SYNCQ_ESYS;
    if ((size_t)st.st_size >= sizeof(am_header)) {
      void *b = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (b == MAP_FAILED) return SYNCQ_ESYS;
      /* acquire: pairs with the release store of magic at creation */
      if (atomic_load_explicit(&((am_header *)b)->magic, memory_order_acquire) == AM_MAGIC) {
        am_geometry g;
        am_geometry_read(b, (size_t)st.st_size, &g);
        if (!am_geometry_valid(&g, (size_t)st.st_size)) {
          munmap(b, (size_t)st.st_size);
          return SYNCQ_EINVAL;
        }
        /* the size the geometry was just checked against; the creator's
         * prefault made its pages, so a failure here is only a missed
         * head start: the pages fault in at first use */
        (void)am_prefault(b, (size_t)st.st_size);
        *base = b;
        *size = (size_t)st.st_size;
        *geo = g; /* the copy every later access of this mapping goes by */
        return SYNCQ_OK;
      }
      munmap(b, (size_t)st.st_size);
    }
    if (now_ns() >= deadline) return SYNCQ_EINVAL; /* not an endpoint (or its creator died making it) */
    struct timespec ts = {0, (long)AM_ATTACH_POLL_NS};
    nanosleep(&ts, NULL);
  }
}

int am_map(const char *name, void **base, size_t *size, am_geometry *geo) {
  char path[AM_PATH_MAX];
  shm_path(name, path);
  int fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return errno == ENOENT ? SYNCQ_ENOENT : SYNCQ_ESYS;
  int r = map_fd(fd, base, size, geo);
  int e = errno;
  close(fd);
  errno = e;
  if (r == SYNCQ_OK && atomic_load(&((am_header *)*base)->closed) != 0u) {
    munmap(*base, *size);
    return SYNCQ_EDEAD;
  }
  return r;
}

/* Our name's index in the destination's peer table (000's endpoints reply
 * to the requester: the table turns a 16-bit index in the packet into the
 * requester's endpoint name). */
static int peer_index(void *base, const am_geometry *g, const char *self_name, uint16_t *out) {
  am_peer_slot *t = am_at(base, g->peers_off);      /* validated, not re-read from the segment */
  for (unsigned i = 0; i < SYNCQ_AM_MAX_PEERS; i++) /* acquire: pairs with the release store of READY after the name */
    if (atomic_load_explicit(&t[i].state, memory_order_acquire) == AM_PEER_READY &&
        strncmp(t[i].name, self_name, sizeof t[i].name) == 0) { /* bounded: the slot may be garbage */
      *out = (uint16_t)i;
      return SYNCQ_OK;
    }
  for (unsigned i = 0; i < SYNCQ_AM_MAX_PEERS; i++) {
    uint32_t expect = AM_PEER_FREE;
    /* relaxed: the slot's name is published by the release store below */
    if (atomic_compare_exchange_strong_explicit(&t[i].state, &expect, AM_PEER_WRITING, memory_order_relaxed,
                                                memory_order_relaxed)) {
      snprintf(t[i].name, sizeof t[i].name, "%s", self_name);
      atomic_store_explicit(&t[i].state, AM_PEER_READY, memory_order_release); /* pairs with the acquire above */
      *out = (uint16_t)i;
      return SYNCQ_OK;
    }
  }
  return SYNCQ_ELIMIT;
}

int am_peer_make(syncq_am_endpoint *self, const char *name, syncq_am_peer **out) {
  syncq_am_peer *p = calloc(1, sizeof *p);
  if (p == NULL) return SYNCQ_ENOMEM;
  int r = am_map(name, &p->base, &p->size, &p->geo);
  if (r != SYNCQ_OK) {
    free(p);
    return r;
  }
  /* Its creator is the only process that polls it: gone, nothing sent
   * there would ever be handled (one read of /proc) */
  if (am_owner_dead((uint32_t)p->geo.creator_pid, p->geo.creator_start)) {
    munmap(p->base, p->size);
    free(p);
    return SYNCQ_EDEAD;
  }
  /* That was the peer's first look: its first send (dead_check_ns 0)
   * starts its thread's pace but reads /proc again only if an interval
   * has passed since (am.c, am_send_look) */
  p->connect_ns = syncq_now_ns();
  p->claim = claim_ops[p->geo.claim]; /* in range: am_map validated the geometry */
  p->self = self;
  p->src_index = AM_NO_PEER;
  if (self != NULL) {
    r = peer_index(p->base, &p->geo, self->name, &p->src_index);
    if (r != SYNCQ_OK) {
      munmap(p->base, p->size);
      free(p);
      return r;
    }
  }
  snprintf(p->name, sizeof p->name, "%s", name);
  *out = p;
  return SYNCQ_OK;
}

int syncq_am_connect(syncq_am_endpoint *self, const char *name, syncq_am_peer **out) {
  if (out == NULL || !am_name_ok(name)) return SYNCQ_EINVAL;
  return am_peer_make(self, name, out);
}

int am_peer_transport(syncq_am_endpoint *self, const am_transport *tp, int rank, syncq_am_peer **out) {
  if (tp == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_am_peer *p = calloc(1, sizeof *p);
  if (p == NULL) return SYNCQ_ENOMEM;
  p->self = self;
  p->src_index = AM_NO_PEER;
  p->tp = tp;
  p->trank = rank;
  snprintf(p->name, sizeof p->name, "rank-%d", rank);
  *out = p;
  return SYNCQ_OK;
}

int am_peer_end(const syncq_am_peer *p, bool look, uint32_t *pid) {
  if (p == NULL || p->tp != NULL || p->base == NULL) return AM_END_LIVE;
  am_header *h = p->base; /* (read only; an atomic load wants a pointer to non-const under older clang) */
  /* relaxed: a hint, as a send's look at it (am.c): shutdown is final
   * (leaving is followed only by closed) */
  uint32_t closed = atomic_load_explicit(&h->closed, memory_order_relaxed);
  if (closed != 0u && closed != AM_LEAVING) return AM_END_CLOSED;
  /* the creator as validated at connect (geo), not the segment's copy:
   * one that died while leaving died */
  if (look && am_owner_dead((uint32_t)p->geo.creator_pid, p->geo.creator_start)) {
    if (pid != NULL) *pid = (uint32_t)p->geo.creator_pid;
    return AM_END_DIED;
  }
  return closed == AM_LEAVING ? AM_END_LEAVING : AM_END_LIVE;
}

void am_endpoint_leave(syncq_am_endpoint *ep) {
  if (ep == NULL) return;
  am_header *h = ep->base;
  uint32_t open = 0u;
  /* only an open endpoint becomes leaving: closed stays closed */
  (void)atomic_compare_exchange_strong(&h->closed, &open, AM_LEAVING);
}

int syncq_am_disconnect(syncq_am_peer *peer) {
  if (peer == NULL) return SYNCQ_EINVAL;
  if (peer->tp == NULL) munmap(peer->base, peer->size);
  free(peer);
  return SYNCQ_OK;
}

int syncq_am_unlink(const char *name) {
  if (!am_name_ok(name)) return SYNCQ_EINVAL;
  char path[AM_PATH_MAX];
  shm_path(name, path);
  int fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return errno == ENOENT ? SYNCQ_ENOENT : SYNCQ_ESYS;
  struct stat st;
  bool busy = false;
  if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(am_header)) {
    void *b = mmap(NULL, sizeof(am_header), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (b != MAP_FAILED) {
      am_header *h = b;
      /* acquire: pairs with the release store of magic at creation */
      busy = atomic_load_explicit(&h->magic, memory_order_acquire) == AM_MAGIC && atomic_load(&h->closed) == 0u &&
             !am_owner_dead((uint32_t)h->creator_pid, h->creator_start);
      munmap(b, sizeof(am_header));
    }
  }
  close(fd);
  if (busy) return SYNCQ_EBUSY;
  if (shm_unlink(path) != 0) return errno == ENOENT ? SYNCQ_ENOENT : SYNCQ_ESYS;
  return SYNCQ_OK;
}

/* The client in slot `slot` of ep's peer table, looked at by its
 * endpoint's name: the table was validated at creation (peers_off), the
 * slot's state is only compared and its name copied, bounded, and checked
 * as a name before it is opened. Only the client segment's header is
 * mapped (as syncq_am_unlink does), and each word read from it (magic,
 * closed, the creator's pid and start time) is only compared or handed to
 * am_owner_dead, which reads /proc by number: a client that wrote
 * anything there changes the answer about itself, nothing else. */
int syncq_am_sender_check(const syncq_am_endpoint *ep, unsigned slot, char *name, char *why, size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  if (name != NULL) name[0] = '\0';
  if (ep == NULL || slot >= SYNCQ_AM_MAX_PEERS) return SYNCQ_EINVAL;
  am_peer_slot *t = am_at(ep->base, ep->geo.peers_off); /* the validated offset, not the segment's */
  /* acquire: pairs with the release store of READY after the name (peer_index) */
  if (atomic_load_explicit(&t[slot].state, memory_order_acquire) != AM_PEER_READY) return SYNCQ_ENOENT;
  char own[SYNCQ_AM_NAME_MAX + 1];
  memcpy(own, t[slot].name, sizeof own);
  own[SYNCQ_AM_NAME_MAX] = '\0';
  if (!am_name_ok(own)) {
    if (why != NULL && why_size > 0) snprintf(why, why_size, "its slot was overwritten");
    return SYNCQ_EINVAL;
  }
  if (name != NULL) memcpy(name, own, sizeof own);
  char path[AM_PATH_MAX];
  shm_path(own, path);
  int fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno != ENOENT) return SYNCQ_ESYS;
    if (why != NULL && why_size > 0) snprintf(why, why_size, "its endpoint is gone");
    return SYNCQ_EDEAD;
  }
  struct stat st;
  void *b = MAP_FAILED;
  if (fstat(fd, &st) == 0)
    b = st.st_size >= 0 && (size_t)st.st_size >= sizeof(am_header)
          ? mmap(NULL, sizeof(am_header), PROT_READ, MAP_SHARED, fd, 0)
          : NULL; /* too small to be an endpoint */
  int e = errno;
  close(fd);
  if (b == MAP_FAILED) {
    errno = e;
    return SYNCQ_ESYS;
  }
  const char *text = NULL;
  uint32_t pid = 0;
  bool died = false;
  if (b == NULL) {
    text = "its name holds no endpoint";
  } else {
    am_header *h = b; /* (read only; an atomic load wants a pointer to non-const under older clang) */
    /* acquire: pairs with the release store of magic at creation */
    if (atomic_load_explicit(&h->magic, memory_order_acquire) != AM_MAGIC) {
      text = "its name holds no endpoint";
    } else {
      /* relaxed: a hint, as a send's look at it (am.c): shutdown is final */
      uint32_t closed = atomic_load_explicit(&h->closed, memory_order_relaxed);
      pid = (uint32_t)h->creator_pid;
      uint64_t start = h->creator_start;
      if (closed == AM_LEAVING) text = "its endpoint said leaving (its destroy began)";
      else if (closed != 0u) text = "its endpoint was closed";
      else if (am_owner_dead(pid, start)) text = "its process died", died = true;
    }
    munmap(b, sizeof(am_header));
  }
  if (text == NULL) return SYNCQ_OK;
  if (why != NULL && why_size > 0) {
    if (died) snprintf(why, why_size, "%s (pid %u)", text, (unsigned)pid);
    else snprintf(why, why_size, "%s", text);
  }
  return SYNCQ_EDEAD;
}

/* From the process's validated copy: what the segment says now may be
 * overwritten. */
static void fill_limits(const am_geometry *g, syncq_am_limits *out) {
  out->claim = g->claim;
  out->packets = g->packets;
  out->bulk_blocks = g->bulk_blocks;
  out->bulk_size = g->bulk_size;
  out->max_args = SYNCQ_AM_MAX_ARGS;
  out->max_handlers = SYNCQ_AM_MAX_HANDLERS;
  out->max_peers = SYNCQ_AM_MAX_PEERS;
  out->stale_claim_ns = g->stale_ns;
  out->segment_bytes = (size_t)g->size;
}

int syncq_am_limits_of(const syncq_am_endpoint *ep, syncq_am_limits *out) {
  if (ep == NULL || out == NULL) return SYNCQ_EINVAL;
  fill_limits(&ep->geo, out);
  return SYNCQ_OK;
}

int syncq_am_peer_limits(const syncq_am_peer *peer, syncq_am_limits *out) {
  if (peer == NULL || out == NULL) return SYNCQ_EINVAL;
  if (peer->tp != NULL) { /* the transport's limits: words, handlers and its bulk size */
    memset(out, 0, sizeof *out);
    out->claim = -1;
    out->bulk_size = peer->tp->bulk_size;
    out->max_args = SYNCQ_AM_MAX_ARGS;
    out->max_handlers = SYNCQ_AM_MAX_HANDLERS;
    out->max_peers = SYNCQ_AM_MAX_PEERS;
    return SYNCQ_OK;
  }
  fill_limits(&peer->geo, out);
  return SYNCQ_OK;
}

const char *syncq_am_name(const syncq_am_endpoint *ep) { return ep ? ep->name : NULL; }
