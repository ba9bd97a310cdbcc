# SPDX-License-Identifier: BSD-2-Clause
# Writes OUT with SYNCQ_GIT_REVISION from `git describe` of SRC; rewrites it
# only when it changes, so an unchanged tree does not rebuild the lab.
execute_process(COMMAND git -C ${SRC} describe --always --dirty
  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
endif()
set(text "#define SYNCQ_GIT_REVISION \"${rev}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
