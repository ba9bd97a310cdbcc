/* SPDX-License-Identifier: BSD-2-Clause */
// headers_test.cpp — every public header compiles as C++ (17, 20 and 23,
// with g++ and clang++) and links; the structures have the layouts C gives
// them (layout.c), so C++ and the C library agree.
#include "syncq/syncq.h"
#include "syncq/static/lock/mcs.h"
#include "syncq/static/lock/tas.h"
#include "syncq/static/lock/ticket.h"
#include "syncq/static/queue/nblfq.h"

#include <cstdio>
#include <cstring>

#include "layout.h"

#define SYNCQ_CXX_ENTRY(T) {#T, sizeof(T), alignof(T)},
static const syncq_layout cxx_layouts[] = {SYNCQ_LAYOUT_TYPES(SYNCQ_CXX_ENTRY)};

int main() {
  int n = static_cast<int>(sizeof cxx_layouts / sizeof cxx_layouts[0]);
  if (n != syncq_c_nlayouts) return 1;
  for (int i = 0; i < n; i++) {
    const syncq_layout &c = syncq_c_layouts[i], &x = cxx_layouts[i];
    if (std::strcmp(c.name, x.name) != 0 || c.size != x.size || c.align != x.align) {
      std::fprintf(stderr, "%s: C %zu/%zu bytes/align, C++ %zu/%zu\n", c.name, c.size, c.align, x.size, x.align);
      return 1;
    }
  }
  syncq_counter *c = nullptr;
  if (syncq_counter_create("faa", 1, &c) != SYNCQ_OK) return 1;
  int64_t old = 0;
  if (syncq_counter_fetch_add(c, 2, &old) != SYNCQ_OK || old != 1) return 1;
  syncq_counter_destroy(c);
  syncq_tagptr t;
  int x = 0;
  if (syncq_tagptr_pack(&x, 7, &t) != SYNCQ_OK || syncq_tagptr_ptr(t) != &x) return 1;
  // the static inline bodies, from C++
  syncq_lock_mcs m;
  syncq_lock_node node;
  if (syncq_lock_mcs_init(&m, nullptr) != SYNCQ_OK || syncq_lock_mcs_lock_inline(&m, &node) != SYNCQ_OK ||
      syncq_lock_mcs_unlock_inline(&m, &node) != SYNCQ_OK)
    return 1;
  if (std::strcmp(syncq_version(), "0.1.0") != 0 && syncq_version_number() != SYNCQ_VERSION_NUMBER) return 1;
  std::printf("C++%ld sees syncq %s: %d layouts agree, %s\n", static_cast<long>(__cplusplus), syncq_version(), n,
              syncq_strerror(SYNCQ_FULL));
  return 0;
}
