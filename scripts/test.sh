#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds leanchan and runs every test.
#
#   scripts/test.sh          optimized build, all tests (incl. consumers)
#   scripts/test.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer
#   scripts/test.sh tsan     ThreadSanitizer
#   scripts/test.sh clang    Clang instead of GCC (warnings as errors; the
#                            channel also with -Wconversion, as with GCC)
#   scripts/test.sh portable the portable backends, as off Linux: the wait
#                            backend on condition variables instead of
#                            futexes, BlockPool on operator new instead of
#                            mmap; every test but the explorer's (which
#                            replaces the wait backend anyway)
#   scripts/test.sh boost    leanchan::asio on Boost.Asio instead of
#                            standalone Asio (LEANCHAN_ASIO_USE_BOOST): only
#                            the asio tests, the only ones it changes
#   scripts/test.sh boost-asan  the same under ASan+UBSan
#
# leanchan-proxy (always on Boost.Asio and Beast, whatever the mode) is
# built and tested (label proxy) in the optimized, ASan and TSan modes; the
# other modes leave it out.
#
# Sanitizer runs shrink the stress rounds (LEANCHAN_STRESS_SCALE) to fit CI.
# The schedule explorer (labels explore, explore-mutants) runs in the
# optimized and ASan builds; under TSan it is skipped: it runs one thread at
# a time, so TSan would only slow it down (docs/explorer.md).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-release}"
jobs="$(nproc)"
# targets: what to build (empty: everything); only: which tests to run (all).
targets=(); only=()
case "$mode" in
  release) build=build; flags=(); scale="${LEANCHAN_STRESS_SCALE:-1}"; skip=() ;;
  asan) build=build-asan; flags=("-DLEANCHAN_SANITIZE=address;undefined" -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-0.3}"; skip=() ;;
  tsan) build=build-tsan; flags=(-DLEANCHAN_SANITIZE=thread -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-0.1}"; skip=(-LE explore) ;;
  clang) build=build-clang; flags=(-DCMAKE_CXX_COMPILER=clang++ -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF -DLEANCHAN_BUILD_PROXY=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-0.3}"; skip=() ;;
  portable) build=build-portable; flags=(-DLEANCHAN_WAIT_BACKEND=portable -DLEANCHAN_BLOCK_POOL_BACKEND=portable -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF -DLEANCHAN_BUILD_PROXY=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-0.3}"; skip=(-LE explore) ;;
  boost) build=build-boost; flags=(-DLEANCHAN_ASIO_USE_BOOST=ON -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF -DLEANCHAN_BUILD_PROXY=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-1}"; skip=(); targets=(asio_tests); only=(-L asio) ;;
  boost-asan) build=build-boost-asan; flags=(-DLEANCHAN_ASIO_USE_BOOST=ON "-DLEANCHAN_SANITIZE=address;undefined" -DLEANCHAN_CONSUMER_TESTS=OFF -DLEANCHAN_BUILD_BENCHMARKS=OFF -DLEANCHAN_BUILD_PROXY=OFF)
        scale="${LEANCHAN_STRESS_SCALE:-0.3}"; skip=(); targets=(asio_tests); only=(-L asio) ;;
  *) echo "usage: $0 [release|asan|tsan|clang|portable|boost|boost-asan]" >&2; exit 2 ;;
esac

scripts/setup.sh "$mode"
# LEANCHAN_REQUIRE_ALL: every part is built (a missing dependency fails the
# configure instead of skipping the part's tests).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEANCHAN_WERROR=ON \
  -DLEANCHAN_REQUIRE_ALL=ON "${flags[@]}"
cmake --build "$build" -j "$jobs" ${targets[@]+--target "${targets[@]}"}
cd "$build"
LEANCHAN_STRESS_SCALE="$scale" ctest --output-on-failure --no-tests=error -j "$jobs" \
  "${only[@]}" "${skip[@]}"
