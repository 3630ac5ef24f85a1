// SPDX-License-Identifier: MIT
// Whether a page is in the resident set (mincore), for the BlockPool tests;
// and a pass-through resource that records the addresses of one request
// size, so a test can ask about the pages a channel's blocks used.
#ifndef LEANCHAN_TESTS_MEMORY_PAGE_PROBE_H_
#define LEANCHAN_TESTS_MEMORY_PAGE_PROBE_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace leanchan::testing {

// True if the page holding `address` is resident; false if not, or where
// mincore is not available.
inline bool page_resident(const void* address) {
#if defined(__linux__)
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(address) & ~(page - 1);
  unsigned char state = 0;
  if (::mincore(reinterpret_cast<void*>(start), page, &state) != 0) return false;
  return (state & 1) != 0;
#else
  (void)address;
  return false;
#endif
}

// Passes every request to `upstream`; records the address of each
// allocation of exactly `bytes`, up to `reserve` of them (single-threaded
// use; the record's memory is allocated and touched at construction).
class RecordingResource : public std::pmr::memory_resource {
 public:
  RecordingResource(std::pmr::memory_resource* upstream, std::size_t bytes, std::size_t reserve)
      : upstream_(upstream), bytes_(bytes) {
    addresses_.resize(reserve);  // touched now, so it is resident before a test measures
    addresses_.clear();
  }
  const std::vector<void*>& addresses() const { return addresses_; }
  void clear() { addresses_.clear(); }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = upstream_->allocate(bytes, alignment);
    if (bytes == bytes_ && addresses_.size() < addresses_.capacity()) addresses_.push_back(p);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    upstream_->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  std::pmr::memory_resource* upstream_;
  std::size_t bytes_;
  std::vector<void*> addresses_;
};

}  // namespace leanchan::testing

#endif  // LEANCHAN_TESTS_MEMORY_PAGE_PROBE_H_
