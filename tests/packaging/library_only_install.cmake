# SPDX-License-Identifier: MIT
# The commands of docs/install.md's library-only install, run as a user
# would: configure with the defaults, build only the library target,
# install. The install must succeed without the parts that were not built
# (the report, the profiler), install the library and its headers, and
# leave a package that find_package accepts, reporting the profiler
# missing by name. Run with:
#   cmake -DLEANCHAN_SOURCE_DIR=... -DWORK_DIR=... -P library_only_install.cmake
foreach(var LEANCHAN_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "library_only_install.cmake: ${var} is not set")
  endif()
endforeach()

set(LEANCHAN_EXPECT_PREFIX "library-only install")
include(${CMAKE_CURRENT_LIST_DIR}/script_support.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${LEANCHAN_SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --target leanchan_channel)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/build --prefix ${prefix})

file(GLOB_RECURSE libraries ${prefix}/lib*/libleanchan.*)
expect("libraries" "no libleanchan under ${prefix}")
expect("EXISTS ${prefix}/include/leanchan/channel.h" "no leanchan/channel.h installed")
expect("EXISTS ${prefix}/include/leanchan/async/task.h" "no leanchan/async/task.h installed")
expect("NOT EXISTS ${prefix}/bin/leanchan-memtable" "the report was installed without being built")
file(GLOB_RECURSE profiler_files ${prefix}/*leanchanProfilerTargets*.cmake ${prefix}/*leanchan_profiler*
     ${prefix}/include/leanchan/profiler/*)
expect("NOT profiler_files" "profiler files installed without being built: ${profiler_files}")

# The package works for the library and the header-only parts ...
file(WRITE ${WORK_DIR}/consumer/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.22)\nproject(c LANGUAGES CXX)\n"
     "find_package(leanchan REQUIRED COMPONENTS channel async)\n"
     "add_executable(consumer main.cc)\n"
     "target_link_libraries(consumer PRIVATE leanchan::channel leanchan::async)\n")
file(COPY ${LEANCHAN_SOURCE_DIR}/tests/packaging/consumers/main_async.cc DESTINATION ${WORK_DIR})
file(RENAME ${WORK_DIR}/main_async.cc ${WORK_DIR}/consumer/main.cc)
run(${CMAKE_COMMAND} -S ${WORK_DIR}/consumer -B ${WORK_DIR}/consumer-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${WORK_DIR}/consumer-build/consumer)

# ... and names the profiler as not installed when a consumer asks for it.
file(WRITE ${WORK_DIR}/wants-profiler/CMakeLists.txt
     "cmake_minimum_required(VERSION 3.22)\nproject(p LANGUAGES CXX)\n"
     "find_package(leanchan REQUIRED COMPONENTS profiler)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/wants-profiler -B ${WORK_DIR}/wants-build
                -DCMAKE_PREFIX_PATH=${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
expect("NOT rc EQUAL 0" "find_package(COMPONENTS profiler) succeeded without the profiler")
string(REPLACE "\n" " " out "${out}")
string(REGEX REPLACE " +" " " out "${out}")
string(FIND "${out}" "leanchan::profiler needs the profiler built before cmake --install" said)
expect("NOT said EQUAL -1" "find_package did not say why the profiler is missing")
message(STATUS "library-only install: the library installed, the profiler and report reported missing")
