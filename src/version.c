/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * version.c — syncq_version(): the version of the library itself (the
 * headers' SYNCQ_VERSION_* compiled in here, checked against CMake's
 * project() version at configure time).
 */
#include "syncq/syncq.h"
#include "syncq/version.h"

#define SYNCQ_STR_(x) #x
#define SYNCQ_STR(x) SYNCQ_STR_(x)

const char *syncq_version(void) {
  return SYNCQ_STR(SYNCQ_VERSION_MAJOR) "." SYNCQ_STR(SYNCQ_VERSION_MINOR) "." SYNCQ_STR(SYNCQ_VERSION_PATCH);
}

int syncq_version_number(void) { return SYNCQ_VERSION_NUMBER; }
