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
message(STATUS "both consumers built and ran")
