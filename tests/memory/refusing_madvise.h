// SPDX-License-Identifier: MIT
// A madvise that refuses the BlockPool's give-backs on demand, as the
// operating system does for locked memory (mlock, mlockall). Include it
// from exactly one source of a test binary: it defines the process's
// madvise (the executable's definition comes before the C library's).
#ifndef LEANCHAN_TESTS_MEMORY_REFUSING_MADVISE_H_
#define LEANCHAN_TESTS_MEMORY_REFUSING_MADVISE_H_

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>

namespace leanchan::testing {

// Give-backs still to refuse (INT_MAX: all), and how many were refused.
inline std::atomic<int> madvise_refusals_left{0};
inline std::atomic<int> madvise_refused{0};

}  // namespace leanchan::testing

// Refuses the pool's give-back of a page (MADV_DONTNEED of one page) while
// refusals are left; every other call goes to the kernel.
extern "C" int madvise(void* address, std::size_t length, int advice) noexcept {
  using leanchan::testing::madvise_refusals_left;
  if (advice == MADV_DONTNEED && length == static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
    int left = madvise_refusals_left.load();
    while (left > 0 &&
           !madvise_refusals_left.compare_exchange_weak(left, left == INT_MAX ? left : left - 1)) {
    }
    if (left > 0) {
      leanchan::testing::madvise_refused.fetch_add(1);
      errno = EINVAL;
      return -1;
    }
  }
  return static_cast<int>(::syscall(SYS_madvise, address, length, advice));
}

#endif  // LEANCHAN_TESTS_MEMORY_REFUSING_MADVISE_H_
