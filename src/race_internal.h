/* SPDX-License-Identifier: BSD-2-Clause */
/* race_internal.h — SYNCQ_RACE_POINT for the library's own sources:
 * nothing, unless the race test library (tests/CMakeLists.txt, syncq_race)
 * defined it first by forcing tests/support/syncq_race.h in. Not
 * installed: the installed static bodies (include/syncq/static/) define no
 * point macro and compile a point only where one is defined
 * (`#ifdef SYNCQ_RACE_POINT` around each). */
#ifndef SYNCQ_RACE_INTERNAL_H
#define SYNCQ_RACE_INTERNAL_H

#ifndef SYNCQ_RACE_POINT
#define SYNCQ_RACE_POINT(name) ((void)0)
#endif

#endif
