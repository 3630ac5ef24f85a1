// SPDX-License-Identifier: MIT
// BlockPool's memory from the operating system (block_pool_os.h).
#include "block_pool_os.h"

#include <cstdint>
#include <cstring>
#include <new>

#if !defined(LEANCHAN_BLOCK_POOL_PORTABLE)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace leanchan::internal::pool_os {

#if !defined(LEANCHAN_BLOCK_POOL_PORTABLE)

std::size_t page_size() noexcept {
  static const std::size_t page = [] {
    const long reported = ::sysconf(_SC_PAGESIZE);
    return reported >= 4096 ? static_cast<std::size_t>(reported) : std::size_t{4096};
  }();
  return page;
}

void* map(std::size_t bytes, std::size_t alignment) noexcept {
  const std::size_t page = page_size();
  // A span that would wrap cannot be mapped (and would unmap from the wrong
  // end below).
  if (alignment > page && bytes > SIZE_MAX - (alignment - page)) return nullptr;
  // Over-map by alignment - page, then trim both ends to an aligned range.
  const std::size_t span = alignment > page ? bytes + alignment - page : bytes;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t end = aligned + bytes;
  if (end < start + span) ::munmap(reinterpret_cast<void*>(end), start + span - end);
  void* memory = reinterpret_cast<void*>(aligned);
  // Without this a 2 MiB-aligned range could be backed by one huge page:
  // resident whole on first touch, and not given back page by page.
  (void)::madvise(memory, bytes, MADV_NOHUGEPAGE);
  return memory;
}

void unmap(void* memory, std::size_t bytes, std::size_t /*alignment*/) noexcept {
  ::munmap(memory, bytes);
}

bool give_back(void* memory, std::size_t bytes) noexcept {
  return ::madvise(memory, bytes, MADV_DONTNEED) == 0;
}

bool gives_back() noexcept {
  return true;
}

#else  // LEANCHAN_BLOCK_POOL_PORTABLE

std::size_t page_size() noexcept {
  return 4096;
}

void* map(std::size_t bytes, std::size_t alignment) noexcept {
  void* memory = ::operator new(bytes, std::align_val_t(alignment), std::nothrow);
  if (memory != nullptr) std::memset(memory, 0, bytes);
  return memory;
}

void unmap(void* memory, std::size_t bytes, std::size_t alignment) noexcept {
  ::operator delete(memory, bytes, std::align_val_t(alignment));
}

bool give_back(void* /*memory*/, std::size_t /*bytes*/) noexcept {
  return false;
}

bool gives_back() noexcept {
  return false;
}

#endif

}  // namespace leanchan::internal::pool_os
