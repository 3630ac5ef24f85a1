# SPDX-License-Identifier: MIT
# What the packaging scripts (run with cmake -P) share:
#   run(<command>...): runs it; fails with its output unless it exits 0;
#   expect("<if() condition>" "<message>"): fails with the message unless
#     the condition holds (evaluated in the caller's scope). Set
#     LEANCHAN_EXPECT_PREFIX before including, to name the script.
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}")
  endif()
  if(LEANCHAN_RUN_VERBOSE)
    message(STATUS "${out}")
  endif()
endfunction()
macro(expect condition what)
  cmake_language(EVAL CODE "if(NOT (${condition}))\n message(FATAL_ERROR [==[${LEANCHAN_EXPECT_PREFIX}: ${what}]==])\nendif()")
endmacro()
