/* SPDX-License-Identifier: BSD-2-Clause */
/* clash.c — a program with names of its own that libsyncq uses inside
 * (am_map, po_mailbox_mpsc, am_claim_locked), linked statically with the
 * parts of libsyncq that define them: the link must succeed and each side
 * must keep its own definition. */
#include <stdio.h>
#include <string.h>

#include "syncq/am.h"
#include "syncq/po.h"
#include "syncq/version.h"

int am_map(const char *name) { return (int)strlen(name); }
int po_mailbox_mpsc = 42;
int am_claim_locked(void) { return 7; }

int main(void) {
  int n = syncq_po_mailbox_count(); /* pulls in the postoffice */
  syncq_am_endpoint *ep = NULL;
  /* pulls in the active messages; a malformed name is refused */
  int r = syncq_am_create("", NULL, &ep);
  if (n <= 0 || r != SYNCQ_EINVAL || am_map("abc") != 3 || po_mailbox_mpsc != 42 || am_claim_locked() != 7) {
    fprintf(stderr, "clash: wrong results (%d mailboxes, create %d)\n", n, r);
    return 1;
  }
  printf("clash: own am_map beside libsyncq %s: ok\n", syncq_version());
  return 0;
}
