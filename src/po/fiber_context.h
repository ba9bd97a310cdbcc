/* SPDX-License-Identifier: BSD-2-Clause */
/* fiber_context.h — the one place the fiber backend touches the machine:
 * Boost.Context's fcontext (make and jump), and the sanitizers' fiber
 * annotations that must bracket every jump.
 *
 * Why fcontext: a jump saves and restores only the callee-saved registers
 * and the stack pointer (a few nanoseconds, no system call), where
 * ucontext's swapcontext saves the signal mask with a system call on every
 * switch. Boost.Context ships make_fcontext/jump_fcontext as assembly with
 * C linkage in libboost_context (Debian libboost-context-dev), so C calls
 * them directly; the declarations below repeat fcontext.hpp's (which is
 * C++ only).
 *
 * Sanitizers: ThreadSanitizer keeps a shadow state per fiber
 * (__tsan_create_fiber / __tsan_switch_to_fiber before each jump);
 * AddressSanitizer must be told the stack it is about to run on
 * (__sanitizer_start_switch_fiber before a jump, ..._finish_ after it), or
 * it reports the new stack's frames as wild accesses. Without a sanitizer
 * every hook below compiles to nothing.
 */
#ifndef SYNCQ_PO_FIBER_CONTEXT_H
#define SYNCQ_PO_FIBER_CONTEXT_H

#include <stddef.h>

#include "sanitizer.h" /* PO_TSAN, PO_ASAN */

#if PO_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#if PO_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* A suspended context: an opaque pointer into its own stack. */
typedef void *po_fctx;
/* What a jump delivers to the resumed side: the context that jumped (now
 * suspended) and the word it passed. */
typedef struct po_transfer {
  po_fctx fctx;
  void *data;
} po_transfer;

/* libboost_context's symbols (boost/context/detail/fcontext.hpp). */
po_transfer jump_fcontext(po_fctx const to, void *vp);
po_fctx make_fcontext(void *sp, size_t size, void (*fn)(po_transfer));

/* The sanitizer state of one context (a fiber, or a scheduler thread's own
 * stack). */
typedef struct po_san {
  void *tsan_fiber;      /* TSan's fiber handle */
  void *asan_fake_stack; /* ASan's saved fake stack of the suspended context */
  const void *stack_lo;  /* the context's stack: lowest address */
  size_t stack_size;
} po_san;

/* A new fiber's state (stack [lo, lo + size)). The stack may have been
 * another fiber's, which left by a jump, not a return: ASan forgets the
 * redzones its frames left poisoned. */
static inline void po_san_fiber_init(po_san *s, const void *lo, size_t size) {
#if PO_ASAN
  ASAN_UNPOISON_MEMORY_REGION(lo, size);
#endif
  s->asan_fake_stack = NULL;
  s->stack_lo = lo;
  s->stack_size = size;
#if PO_TSAN
  s->tsan_fiber = __tsan_create_fiber(0);
#else
  s->tsan_fiber = NULL;
#endif
}

/* A scheduler thread's own context, on its stack [lo, lo + size). */
static inline void po_san_thread_init(po_san *s, const void *lo, size_t size) {
  s->asan_fake_stack = NULL;
  s->stack_lo = lo;
  s->stack_size = size;
#if PO_TSAN
  s->tsan_fiber = __tsan_get_current_fiber();
#else
  s->tsan_fiber = NULL;
#endif
}

static inline void po_san_fiber_destroy(po_san *s) {
#if PO_TSAN
  if (s->tsan_fiber != NULL) __tsan_destroy_fiber(s->tsan_fiber);
#endif
  s->tsan_fiber = NULL;
}

/* Just before jumping from `from` to `to`. `from_exits`: the suspended
 * context will never run again (ASan then drops its fake stack). */
static inline void po_san_start(po_san *from, const po_san *to, int from_exits) {
#if PO_ASAN
  __sanitizer_start_switch_fiber(from_exits ? NULL : &from->asan_fake_stack, to->stack_lo, to->stack_size);
#else
  (void)from;
  (void)from_exits;
#endif
#if PO_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber, 0);
#else
  (void)to;
#endif
}

/* Right after a jump lands in `self`. */
static inline void po_san_finish(po_san *self) {
#if PO_ASAN
  __sanitizer_finish_switch_fiber(self->asan_fake_stack, NULL, NULL);
#else
  (void)self;
#endif
}

#endif
