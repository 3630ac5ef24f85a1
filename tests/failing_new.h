// SPDX-License-Identifier: MIT
// A global operator new that a test can make throw std::bad_alloc: the
// plain and array forms count down and throw at the chosen allocation; the
// nothrow forms and the deletes are replaced only so that every pair
// matches (malloc and free, which AddressSanitizer checks). The
// replacement applies to the whole program: include this header in exactly
// one source file of a test binary of its own.
#ifndef LEANCHAN_TESTS_FAILING_NEW_H_
#define LEANCHAN_TESTS_FAILING_NEW_H_

#include <cstddef>
#include <cstdlib>
#include <new>

namespace leanchan::testing {

// Set by a test: the nth plain or array allocation from now on this thread
// throws (1: the next one); 0: none does.
inline thread_local int fail_allocation_at = 0;

inline void* failing_allocate(std::size_t size) {
  if (fail_allocation_at > 0 && --fail_allocation_at == 0) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace leanchan::testing

void* operator new(std::size_t size) {
  return leanchan::testing::failing_allocate(size);
}
void* operator new[](std::size_t size) {
  return leanchan::testing::failing_allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

#endif  // LEANCHAN_TESTS_FAILING_NEW_H_
