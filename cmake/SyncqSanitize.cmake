# SPDX-License-Identifier: BSD-2-Clause
# SYNCQ_SANITIZE=thread  -> ThreadSanitizer
# SYNCQ_SANITIZE=address -> AddressSanitizer + UndefinedBehaviorSanitizer
# Applied to every target of the tree. Under TSan the double-width CAS goes
# through the compiler's 16-byte atomic builtin (which TSan understands)
# instead of inline cmpxchg16b, so libatomic is linked.
set(SYNCQ_ATOMIC_LIB "")
if(SYNCQ_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  set(SYNCQ_ATOMIC_LIB atomic)
elseif(SYNCQ_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_C_COMPILER_ID STREQUAL "Clang") # C++ comes later (lab/peers/), from the same compiler
    # Not UBSan's vptr check in the C++ peers (lab/peers/): its runtime is
    # UBSan's C++ part, which the clang driver links only into programs
    # linked by clang++, and the C programs that link the peers are linked
    # by clang (linking it there would pull in libstdc++ for every one).
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize=vptr>)
  endif()
elseif(NOT SYNCQ_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SYNCQ_SANITIZE must be empty, 'thread' or 'address' (got '${SYNCQ_SANITIZE}')")
endif()
# Non-x86-64 targets take the 16-byte builtin too.
if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(SYNCQ_ATOMIC_LIB atomic)
endif()
