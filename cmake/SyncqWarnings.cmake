# SPDX-License-Identifier: BSD-2-Clause
# Warnings every syncq target builds with; the tree is kept warning-free.
function(syncq_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wstrict-prototypes
    -Wmissing-prototypes -Wpointer-arith -Wno-missing-field-initializers)
endfunction()
