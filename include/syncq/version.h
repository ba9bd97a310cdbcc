/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/version.h — the version of the library a program runs with.
 *
 * The SYNCQ_VERSION_* macros (syncq/syncq.h) say which headers a program
 * was compiled against; these functions say which library it linked or
 * loaded (libsyncq.so.MAJOR.MINOR: compatible within one MAJOR.MINOR, as
 * the CMake package's version file says).
 */
#ifndef SYNCQ_VERSION_H
#define SYNCQ_VERSION_H

#include "syncq/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library (a static string, never NULL).
 * Thread safety: any thread, any time, from a signal handler too (a
 * constant).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_version(void);
/* MAJOR * 10000 + MINOR * 100 + PATCH: compare with SYNCQ_VERSION_NUMBER.
 * Thread safety: any thread, any time, from a signal handler too (a
 * constant).
 * Progress: wait-free.
 * Example: `if (syncq_version_number() != SYNCQ_VERSION_NUMBER) { }` */
SYNCQ_API int syncq_version_number(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_VERSION_H */
