// SPDX-License-Identifier: MIT
// For the tests linked against the test-points build of the library: the
// hook set for one scope, and cleared on the way out even when an ASSERT
// returns early (a hook left set would run in the binary's later tests).
#ifndef LEANCHAN_TESTS_TEST_POINT_SUPPORT_H_
#define LEANCHAN_TESTS_TEST_POINT_SUPPORT_H_

#include <atomic>

#include "leanchan/internal/test_point.h"

namespace leanchan::testing {

class ScopedTestPointHook {
 public:
  // release / release: the hook's globals, set before, are seen by the
  // thread that reaches a point (reach() loads the hook with acquire).
  explicit ScopedTestPointHook(void (*hook)(internal::TestPoint)) {
    internal::test_point_hook.store(hook, std::memory_order_release);
  }
  ~ScopedTestPointHook() { internal::test_point_hook.store(nullptr, std::memory_order_release); }
  ScopedTestPointHook(const ScopedTestPointHook&) = delete;
  ScopedTestPointHook& operator=(const ScopedTestPointHook&) = delete;
};

}  // namespace leanchan::testing

#endif  // LEANCHAN_TESTS_TEST_POINT_SUPPORT_H_
