/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_segment_fuzz.c — a hostile shared segment under an active-message
 * endpoint: the fuzzer writes whatever bytes it likes into the segment
 * (header, peer table, queue blocks, packets, bulk slots and data), then
 * the library attaches to it (syncq_am_connect) and polls it
 * (syncq_am_poll, with handlers that read every argument and bulk byte).
 * Every input must either work or return a status: a crash, an
 * out-of-bounds read (outside the mapping: SIGSEGV; on the heap: ASan), an
 * undefined operation (UBSan) or a hang is a finding.
 *
 * The sender side too: a peer connected (with the endpoint as its own, so
 * handler 3 replies) before any patch sends into the patched segment, so
 * every offset, tail, slot state and lock word a send reads may be the
 * fuzzer's. Sends are SYNCQ_AM_NOWAIT: a plain send waits on a queue that
 * never drains by design, and that is not a finding; everything a NOWAIT
 * send may wait for is bounded.
 *
 * Input: byte 0 chooses the claim (mod 6) of a small endpoint
 * (FUZZ_PACKETS packets, FUZZ_BLOCKS bulk blocks of FUZZ_BULK bytes); then
 * records, each
 *     region (1 byte) | offset (2 bytes, little-endian) | length (1 byte) | bytes
 * overwrite `length` bytes at `offset` (modulo the region's size; cut at
 * its end) of one region of the segment: 0 header, 1 peer table, then per
 * queue (request 2..5, reply 6..9) the queue's fixed block, its packets,
 * its bulk slots, its bulk data. Region 0xFF polls once (so patches and
 * polls interleave); 0xFE | handler sends a short NOWAIT request of two
 * words; 0xFD | handler | length a bulk NOWAIT request of `length` bytes;
 * 0xFC waits (syncq_am_wait, told to sleep at once on the segment's
 * doorbell words, for FUZZ_WAIT_NS: it must end by then whatever the
 * queues and those words hold); other region values are ignored. At the end the segment is attached by
 * name and polled again.
 *
 * The magic word is put back after every patch: an attacher waits
 * AM_ATTACH_WAIT_NS for a segment without it (one being created), which
 * would only slow the fuzzer down; everything else is the fuzzer's.
 *
 * Built by afl-clang-fast (fuzz/run): AFL++ persistent mode. Built by an
 * ordinary compiler (tests/CTest, the sanitizer builds): a replayer that
 * runs every file named on its command line (or in a directory) once,
 * so the corpus is a regression test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/am_internal.h"
#include "syncq/am.h"

#define FUZZ_PACKETS 4u
#define FUZZ_BLOCKS 2u
#define FUZZ_BULK 128u
#define FUZZ_STALE_NS 1000u /* 1 us: dead-claim and skip paths run within one input */
#define FUZZ_POLL_BUDGET 8u
#define FUZZ_FINAL_POLLS 4
#define FUZZ_MAX_INPUT (1u << 16)
#define FUZZ_POLL_REGION 0xFFu
#define FUZZ_SEND_REGION 0xFEu
#define FUZZ_SEND_BULK_REGION 0xFDu
#define FUZZ_WAIT_REGION 0xFCu
#define FUZZ_WAIT_NS 50000u   /* 50 us: one short sleep (or a few yields) per wait record */
#define FUZZ_REPLY_HANDLER 3u /* replies (NOWAIT) to requests: the reply path sends too */
#define FUZZ_HANDLERS 4u      /* handlers 0..3 registered; the rest go to the default */
#define FUZZ_REGIONS (2 + 4 * AM_NQUEUES)

static volatile uint32_t sink; /* what the handlers read, so it is really read */

static void h_read(syncq_am_token *tk, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  (void)ctx;
  uint32_t acc = syncq_am_token_is_request(tk) ? 1u : 2u;
  for (unsigned i = 0; i < nargs; i++) acc = acc * 31u + args[i];
  const unsigned char *d = data;
  for (size_t i = 0; i < len; i++) acc = acc * 31u + d[i];
  sink += acc;
}

static void h_reply(syncq_am_token *tk, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  h_read(tk, args, nargs, data, len, ctx);
  if (syncq_am_token_is_request(tk)) (void)syncq_am_reply(tk, 1, args, nargs, SYNCQ_AM_NOWAIT);
}

typedef struct region {
  size_t off, len;
} region;

static void regions_of(void *base, region r[FUZZ_REGIONS]) {
  const am_header *h = base;
  r[0] = (region){0, sizeof(am_header)};
  r[1] = (region){h->peers_off, (size_t)SYNCQ_AM_MAX_PEERS * sizeof(am_peer_slot)};
  for (int q = 0; q < AM_NQUEUES; q++) {
    am_queue *qq = am_queue_of(base, q);
    r[2 + 4 * q] = (region){h->queue_off[q], sizeof(am_queue)};
    r[3 + 4 * q] = (region){qq->packets_off, (size_t)h->packets * sizeof(am_packet)};
    r[4 + 4 * q] = (region){qq->bulk_slots_off, (size_t)h->bulk_blocks * sizeof(am_bulk_slot)};
    r[5 + 4 * q] = (region){qq->bulk_data_off, (size_t)h->bulk_blocks * h->bulk_size};
  }
}

static int one_input(const uint8_t *in, size_t n) {
  if (n == 0) return 0;
  char name[64];
  snprintf(name, sizeof name, "syncq-fuzz-%d", (int)getpid());
  (void)syncq_am_unlink(name); /* a previous input's, if it was cut short */
  syncq_am_config cfg = {.claim = in[0] % SYNCQ_AM_CLAIM_COUNT,
                         .packets = FUZZ_PACKETS,
                         .bulk_blocks = FUZZ_BLOCKS,
                         .bulk_size = FUZZ_BULK,
                         .stale_claim_ns = FUZZ_STALE_NS};
  syncq_am_endpoint *ep;
  if (syncq_am_create(name, &cfg, &ep) != SYNCQ_OK) return 0;
  ep->sleep_after_ns = 0; /* a wait record sleeps at its first empty poll */
  for (unsigned i = 0; i < FUZZ_HANDLERS; i++)
    (void)syncq_am_register(ep, i, "read", i == FUZZ_REPLY_HANDLER ? h_reply : h_read, NULL);
  (void)syncq_am_set_default_handler(ep, h_read, NULL);
  syncq_am_peer *sender = NULL; /* connected before the patches: it keeps the geometry it validated */
  if (syncq_am_connect(ep, name, &sender) != SYNCQ_OK) sender = NULL;
  static const uint32_t words[2] = {0x5eed, 0xf00d};
  static unsigned char bulk[FUZZ_BULK * 2];
  unsigned char *seg = ep->base;
  region r[FUZZ_REGIONS]; /* from the pristine segment: the fuzzer may change what it says */
  regions_of(seg, r);
  size_t i = 1;
  while (i < n) {
    unsigned reg = in[i++];
    if (reg == FUZZ_POLL_REGION) {
      (void)syncq_am_poll(ep, FUZZ_POLL_BUDGET, NULL);
      continue;
    }
    if (reg == FUZZ_WAIT_REGION) {
      (void)syncq_am_wait(ep, FUZZ_POLL_BUDGET, FUZZ_WAIT_NS, NULL);
      continue;
    }
    if (reg == FUZZ_SEND_REGION || reg == FUZZ_SEND_BULK_REGION) {
      bool is_bulk = reg == FUZZ_SEND_BULK_REGION;
      if (i + (is_bulk ? 2u : 1u) > n) break;
      unsigned handler = in[i++] % FUZZ_HANDLERS;
      size_t blen = is_bulk ? in[i++] : 0;
      if (sender != NULL) {
        if (is_bulk) (void)syncq_am_request_bulk(sender, handler, bulk, blen, words, 2, SYNCQ_AM_NOWAIT);
        else (void)syncq_am_request(sender, handler, words, 2, SYNCQ_AM_NOWAIT);
      }
      continue;
    }
    if (i + 3 > n) break;
    size_t off = (size_t)in[i] | ((size_t)in[i + 1] << 8);
    size_t len = in[i + 2];
    i += 3;
    if (len > n - i) len = n - i;
    if (reg < FUZZ_REGIONS && r[reg].len > 0) {
      off %= r[reg].len;
      size_t k = len < r[reg].len - off ? len : r[reg].len - off;
      memcpy(seg + r[reg].off + off, in + i, k);
      atomic_store(&((am_header *)seg)->magic, AM_MAGIC);
    }
    i += len;
  }
  /* attach: validation must refuse what it cannot follow safely */
  syncq_am_peer *peer;
  if (syncq_am_connect(NULL, name, &peer) == SYNCQ_OK) {
    syncq_am_limits lim;
    (void)syncq_am_peer_limits(peer, &lim);
    (void)syncq_am_disconnect(peer);
  }
  if (sender != NULL) { /* once more after every patch, short and bulk */
    (void)syncq_am_request(sender, FUZZ_REPLY_HANDLER, words, 2, SYNCQ_AM_NOWAIT);
    (void)syncq_am_request_bulk(sender, 0, bulk, FUZZ_BULK, words, 2, SYNCQ_AM_NOWAIT);
  }
  for (int k = 0; k < FUZZ_FINAL_POLLS; k++) (void)syncq_am_poll(ep, FUZZ_POLL_BUDGET, NULL);
  if (sender != NULL) (void)syncq_am_disconnect(sender);
  syncq_am_counters cnt;
  (void)syncq_am_counters_of(ep, &cnt);
  (void)syncq_am_destroy(ep);
  return 0;
}

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
int main(void) {
  __AFL_INIT();
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(10000)) one_input(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
  return 0;
}
#else
static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 1;
  }
  static uint8_t buf[FUZZ_MAX_INPUT];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return one_input(buf, n);
}

/* Replay: every file given, or every file in a directory given. */
int main(int argc, char **argv) {
  unsigned runs = 0;
  for (int a = 1; a < argc; a++) {
    struct stat st;
    if (stat(argv[a], &st) != 0) {
      perror(argv[a]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[a]) != 0) return 1;
      runs++;
      continue;
    }
    DIR *d = opendir(argv[a]);
    if (d == NULL) return 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
      if (run_file(path) != 0) return 1;
      runs++;
    }
    closedir(d);
  }
  printf("am_segment_fuzz: replayed %u inputs, all returned\n", runs);
  return runs > 0 ? 0 : 1;
}
#endif
