# SPDX-License-Identifier: MIT
# Builds and runs both consumer projects: one pulls leanchan in with
# add_subdirectory, the other installs it to a scratch prefix and finds it
# with find_package. Run with:
#   cmake -DLEANCHAN_SOURCE_DIR=... -DWORK_DIR=... -DBUILD_TYPE=... -P run_consumers.cmake
foreach(var LEANCHAN_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumers.cmake: ${var} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

set(consumers ${LEANCHAN_SOURCE_DIR}/tests/consumers)
file(REMOVE_RECURSE ${WORK_DIR})
set(common -DCMAKE_BUILD_TYPE=Release -DLEANCHAN_BUILD_TESTS=OFF)

# 1. add_subdirectory
run(${CMAKE_COMMAND} -S ${consumers}/add_subdirectory -B ${WORK_DIR}/subdir
    -DLEANCHAN_SOURCE_DIR=${LEANCHAN_SOURCE_DIR} ${common})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir)
run(${WORK_DIR}/subdir/consumer)

# 2. cmake --install, then find_package
run(${CMAKE_COMMAND} -S ${LEANCHAN_SOURCE_DIR} -B ${WORK_DIR}/leanchan ${common})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/leanchan)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/leanchan --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${consumers}/find_package -B ${WORK_DIR}/pkg
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/pkg)
run(${WORK_DIR}/pkg/consumer)

# 3. pkg-config, for builds without CMake: the flags it prints build and
# link the same consumer with the plain compiler.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX_COMPILER NAMES c++ g++ clang++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/lib/pkgconfig:${WORK_DIR}/prefix/lib64/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs leanchan RESULT_VARIABLE rc
                OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_error OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs leanchan failed: ${pc_error}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(${CXX_COMPILER} -O2 ${consumers}/main.cc ${pc_flags} -o ${WORK_DIR}/pc_consumer)
run(${WORK_DIR}/pc_consumer)
message(STATUS "all three consumers built and ran")
