/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * segment.c — where everything lies in an endpoint segment, and the check
 * that a segment's fixed fields describe exactly that layout (layer 1 of
 * src/am, see am_segment.h).
 *
 * Contract
 *   Source:      000 §2, Figure 1 (one queue block per endpoint: two
 *                destination queues, each a packet queue with one cache
 *                line per packet and a shorter bulk queue of
 *                cache-aligned blocks), laid out as header, peer table,
 *                then per queue its fixed block, packets, bulk slots and
 *                bulk data, each on cache lines, the whole in pages.
 *   Progress:    wait-free (no loops but over the two queues).
 *   Atomics:     none: am_geometry_read reads fields written once at
 *                creation, each with one load (SYNCQ_READ_ONCE) into the
 *                copy (a hostile process may change them: the copy read is
 *                only compared and checked, never followed unchecked, and
 *                no field is loaded a second time).
 *   Memory:      never allocates.
 *   Signal-safe: yes (reads and arithmetic; sysconf is async-signal-safe).
 *   Process-shared: reads the shared segment; holds nothing.
 *   Limits:      the SYNCQ_AM_* bounds of syncq/am.h.
 */
#include <string.h>
#include <unistd.h>

#include "am_segment.h"
#include "../read_once_internal.h"

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1u) / a * a; }

void am_layout_of(uint32_t packets, uint32_t blocks, uint32_t bsize, am_layout *l) {
  uint64_t off = round_up(sizeof(am_header), SYNCQ_CACHELINE);
  l->peers_off = off;
  off += (uint64_t)SYNCQ_AM_MAX_PEERS * sizeof(am_peer_slot);
  for (int q = 0; q < AM_NQUEUES; q++) {
    off = round_up(off, _Alignof(am_queue));
    l->queue_off[q] = off;
    off += sizeof(am_queue);
    off = round_up(off, SYNCQ_CACHELINE);
    l->packets_off[q] = off;
    off += (uint64_t)packets * sizeof(am_packet);
    l->slots_off[q] = off;
    off += (uint64_t)blocks * sizeof(am_bulk_slot);
    off = round_up(off, SYNCQ_CACHELINE); /* blocks begin on cache lines (000 §2) */
    l->data_off[q] = off;
    off += (uint64_t)blocks * bsize;
  }
  long page = sysconf(_SC_PAGESIZE);
  l->size = round_up(off, page > 0 ? (uint64_t)page : 4096u);
}

void am_geometry_read(const void *base, size_t mapped, am_geometry *g) {
  memset(g, 0, sizeof *g);
  if (mapped < sizeof(am_header)) return;
  const am_header *h = base;
  /* One load per field (SYNCQ_READ_ONCE): the copy is what the caller
   * checks and then follows, so no field may be loaded again later. */
  g->claim = SYNCQ_READ_ONCE(h->claim);
  g->version = SYNCQ_READ_ONCE(h->version);
  g->stale_ns = SYNCQ_READ_ONCE(h->stale_ns);
  g->creator_pid = SYNCQ_READ_ONCE(h->creator_pid);
  g->creator_start = SYNCQ_READ_ONCE(h->creator_start);
  g->packets = SYNCQ_READ_ONCE(h->packets);
  g->packet_shift = SYNCQ_READ_ONCE(h->packet_shift);
  g->bulk_blocks = SYNCQ_READ_ONCE(h->bulk_blocks);
  g->bulk_size = SYNCQ_READ_ONCE(h->bulk_size);
  g->size = SYNCQ_READ_ONCE(h->size);
  g->peers_off = SYNCQ_READ_ONCE(h->peers_off);
  for (int q = 0; q < AM_NQUEUES; q++) {
    g->queue_off[q] = SYNCQ_READ_ONCE(h->queue_off[q]);
    if (g->queue_off[q] > mapped || mapped - g->queue_off[q] < sizeof(am_queue) ||
        g->queue_off[q] % _Alignof(am_queue) != 0)
      continue; /* invalid (outside, or misaligned): left 0, which no layout has */
    const am_queue *qq = (const am_queue *)((const unsigned char *)base + g->queue_off[q]);
    g->packets_off[q] = SYNCQ_READ_ONCE(qq->packets_off);
    g->slots_off[q] = SYNCQ_READ_ONCE(qq->bulk_slots_off);
    g->data_off[q] = SYNCQ_READ_ONCE(qq->bulk_data_off);
  }
}

bool am_geometry_valid(const am_geometry *g, size_t mapped) {
  if (g->version != AM_VERSION || g->stale_ns == 0) return false;
  if (g->claim < 0 || g->claim >= SYNCQ_AM_CLAIM_COUNT) return false;
  if (!am_pow2(g->packets) || g->packets < 2 || g->packets > SYNCQ_AM_MAX_PACKETS) return false;
  if (g->packet_shift != (uint32_t)__builtin_ctz(g->packets)) return false;
  if (!am_pow2(g->bulk_blocks) || g->bulk_blocks > SYNCQ_AM_MAX_BULK_BLOCKS) return false;
  if (g->bulk_size == 0 || g->bulk_size % SYNCQ_CACHELINE != 0 || g->bulk_size > SYNCQ_AM_BULK_MAX) return false;
  am_layout l;
  am_layout_of(g->packets, g->bulk_blocks, g->bulk_size, &l);
  if (g->size != l.size || l.size != (uint64_t)mapped || g->peers_off != l.peers_off) return false;
  for (int q = 0; q < AM_NQUEUES; q++)
    if (g->queue_off[q] != l.queue_off[q] || g->packets_off[q] != l.packets_off[q] ||
        g->slots_off[q] != l.slots_off[q] || g->data_off[q] != l.data_off[q])
      return false;
  return true;
}
