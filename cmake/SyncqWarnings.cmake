# SPDX-License-Identifier: BSD-2-Clause
# Warnings every syncq target builds with; the tree is kept warning-free
# under gcc and clang, and SYNCQ_WERROR (CI's clang build: make build-clang)
# keeps it so.
option(SYNCQ_WERROR "Treat warnings in syncq's own targets as errors" OFF)
function(syncq_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wpointer-arith -Wno-missing-field-initializers)
  if(SYNCQ_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
