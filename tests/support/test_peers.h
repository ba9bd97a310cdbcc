/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_peers.h — the validation drivers run the peer libraries' structures
 * too (lab/peers/peers.h) when the build has them (SYNCQ_HAVE_PEERS): call
 * test_register_peers() first thing in main(). It prints one line per peer
 * library, so a library that is absent or not run here says why in the
 * test's output instead of vanishing silently.
 */
#ifndef SYNCQ_TEST_PEERS_H
#define SYNCQ_TEST_PEERS_H

#include <stdio.h>

#ifdef SYNCQ_HAVE_PEERS
#include "peers.h"
#endif

static inline void test_register_peers(void) {
#ifdef SYNCQ_HAVE_PEERS
  int n = lab_peers_register(LAB_PEERS_SPSC);
  if (n < 0) fprintf(stderr, "peers: the registry refused an entry (%d)\n", n);
  for (size_t i = 0; i < lab_peers_status_count(); i++) {
    const lab_peer_status *s = lab_peers_status_at(i);
    if (s->registered > 0) fprintf(stderr, "peers: %s: %d structures\n", s->library, s->registered);
    else fprintf(stderr, "peers: %s: SKIPPED: %s\n", s->library, s->why);
  }
#else
  fprintf(stderr, "peers: SKIPPED: this build has no lab (SYNCQ_BUILD_LAB=OFF), so no peer libraries\n");
#endif
}

/* A peer structure (SYNCQ_PROP_PEER) ignores a lock configuration. */
#define TEST_IS_PEER(a) (((a)->props & SYNCQ_PROP_PEER) != 0)

#endif /* SYNCQ_TEST_PEERS_H */
