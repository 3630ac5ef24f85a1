# SPDX-License-Identifier: MIT
# Builds and runs leanchan's consumers with one compiler and one library
# kind: add_subdirectory (building only what it links, installing nothing
# of leanchan's), an installed package found with find_package (with and
# without components, and a shared object linking the library), and
# pkg-config with a consumer that picks its own C++ standard. Run with:
#   cmake -DLEANCHAN_SOURCE_DIR=... -DWORK_DIR=... [-DCOMPILER=clang++]
#         [-DSHARED=ON -DPYTHON3=/usr/bin/python3] -P run_consumers.cmake
# (a shared library is also checked against docs/abi.md's list, with
# Python: PYTHON3 must name it then)
foreach(var LEANCHAN_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumers.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED COMPILER)
  set(COMPILER c++)
endif()
if(NOT DEFINED SHARED)
  set(SHARED OFF)
endif()

set(LEANCHAN_EXPECT_PREFIX consumers)
set(LEANCHAN_RUN_VERBOSE ON)
include(${CMAKE_CURRENT_LIST_DIR}/../script_support.cmake)

set(consumers ${CMAKE_CURRENT_LIST_DIR})
file(REMOVE_RECURSE ${WORK_DIR})
set(common -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${COMPILER})
message(STATUS "consumers with ${COMPILER}, BUILD_SHARED_LIBS=${SHARED}")

# 1. add_subdirectory: only the channel library is built, and the
# consumer's install holds its own program only.
run(${CMAKE_COMMAND} -S ${consumers}/add_subdirectory -B ${WORK_DIR}/subdir
    -DLEANCHAN_SOURCE_DIR=${LEANCHAN_SOURCE_DIR} -DBUILD_SHARED_LIBS=${SHARED} ${common})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/subdir)
run(${WORK_DIR}/subdir/consumer)
file(GLOB_RECURSE built_profiler ${WORK_DIR}/subdir/*leanchan_profiler*.a)
expect("NOT built_profiler" "add_subdirectory built the profiler, which the consumer does not link: ${built_profiler}")
run(${CMAKE_COMMAND} --install ${WORK_DIR}/subdir --prefix ${WORK_DIR}/subdir-prefix)
file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/subdir-prefix ${WORK_DIR}/subdir-prefix/*)
expect("\"${installed}\" STREQUAL \"bin/consumer\"" "the consumer's install also installed: ${installed}")

# 2. cmake --install, then find_package (a library-only build: no test
# stack needed).
run(${CMAKE_COMMAND} -S ${LEANCHAN_SOURCE_DIR} -B ${WORK_DIR}/leanchan ${common}
    -DBUILD_SHARED_LIBS=${SHARED} -DLEANCHAN_BUILD_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF
    -DLEANCHAN_BUILD_REPORT=OFF -DLEANCHAN_BUILD_EXAMPLES=OFF -DLEANCHAN_BUILD_PROXY=OFF)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/leanchan)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/leanchan --prefix ${WORK_DIR}/prefix)
expect("EXISTS ${WORK_DIR}/prefix/share/doc/leanchan/LICENSE" "the package does not ship LICENSE")
if(SHARED)
  file(GLOB sonames ${WORK_DIR}/prefix/lib*/libleanchan.so.0.2)
  expect("sonames" "no libleanchan.so.0.2 (the soname while the version is 0.x)")
  # The shared library exports the entry points docs/abi.md lists, and no
  # other name in namespace leanchan (scripts/check_abi.py, with nm).
  expect("PYTHON3" "python3 not found: the ABI check (scripts/check_abi.py) needs it")
  file(GLOB shared_library ${WORK_DIR}/prefix/lib*/libleanchan.so)
  expect("shared_library" "no libleanchan.so installed")
  run(${PYTHON3} ${LEANCHAN_SOURCE_DIR}/scripts/check_abi.py ${shared_library})
endif()
foreach(components OFF ON)
  run(${CMAKE_COMMAND} -S ${consumers}/find_package -B ${WORK_DIR}/pkg-${components}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DWITH_COMPONENTS=${components}
      -DCMAKE_BUILD_RPATH=${WORK_DIR}/prefix/lib ${common})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/pkg-${components})
  run(${WORK_DIR}/pkg-${components}/consumer)
  run(${WORK_DIR}/pkg-${components}/plugin_consumer)
  if(components)
    run(${WORK_DIR}/pkg-${components}/async_consumer)
    run(${WORK_DIR}/pkg-${components}/asio_consumer)
    run(${WORK_DIR}/pkg-${components}/mimalloc_consumer)
  endif()
endforeach()
# A component that does not exist is reported, not silently accepted.
file(WRITE ${WORK_DIR}/bad-component/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.22)\nproject(bad LANGUAGES CXX)\n"
     "find_package(leanchan REQUIRED COMPONENTS no_such_part)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/bad-component -B ${WORK_DIR}/bad-build
                -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${common}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
expect("NOT rc EQUAL 0" "an unknown component was accepted")
string(FIND "${out}" "has no component 'no_such_part'" at)
expect("at GREATER -1" "the unknown component's message is missing:\n${out}")

# 3. pkg-config, for builds without CMake: the flags it prints build and
# link the same consumer with the plain compiler, and set no C++ standard
# (a consumer's -std=gnu++2b, C++23 on GCC 12 and Clang 14, stays).
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/lib/pkgconfig:${WORK_DIR}/prefix/lib64/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs leanchan RESULT_VARIABLE rc
                OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_error OUTPUT_STRIP_TRAILING_WHITESPACE)
expect("rc EQUAL 0" "pkg-config --cflags --libs leanchan failed: ${pc_error}")
string(FIND "${pc_flags}" "-std=" at)
expect("at EQUAL -1" "pkg-config forces a C++ standard: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(${COMPILER} -std=gnu++2b -O2 ${consumers}/main.cc ${pc_flags} -Wl,-rpath,${WORK_DIR}/prefix/lib
    -o ${WORK_DIR}/pc_consumer)
run(${WORK_DIR}/pc_consumer)
message(STATUS "consumers passed (${COMPILER}, shared=${SHARED})")
