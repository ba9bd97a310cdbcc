// headers_test.cpp — every public header compiles as C++ and links.
#include "syncq/syncq.h"

#include <cstdio>

int main() {
  syncq_counter *c = nullptr;
  if (syncq_counter_create("faa", 1, &c) != SYNCQ_OK) return 1;
  int64_t old = 0;
  if (syncq_counter_fetch_add(c, 2, &old) != SYNCQ_OK || old != 1) return 1;
  syncq_counter_destroy(c);
  syncq_tagptr t;
  int x = 0;
  if (syncq_tagptr_pack(&x, 7, &t) != SYNCQ_OK || syncq_tagptr_ptr(t) != &x) return 1;
  std::printf("C++ sees syncq %d.%d: %s\n", SYNCQ_VERSION_MAJOR, SYNCQ_VERSION_MINOR, syncq_strerror(SYNCQ_FULL));
  return 0;
}
