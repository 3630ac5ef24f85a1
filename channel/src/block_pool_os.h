// SPDX-License-Identifier: MIT
// Where BlockPool's memory comes from: anonymous mappings on Linux (mmap,
// madvise, munmap), or the aligned global operator new elsewhere
// (LEANCHAN_BLOCK_POOL_PORTABLE). Private to the BlockPool sources.
#ifndef LEANCHAN_SRC_BLOCK_POOL_OS_H_
#define LEANCHAN_SRC_BLOCK_POOL_OS_H_

#include <cstddef>

namespace leanchan::internal::pool_os {

// The page size (a power of two, at least 4096).
std::size_t page_size() noexcept;
// `bytes` (a multiple of the page size) of zeroed memory aligned to
// `alignment` (a power of two, at least the page size); null on failure.
// Linux: transparent huge pages are disabled on it, so that a page can be
// given back on its own.
void* map(std::size_t bytes, std::size_t alignment) noexcept;
// Gives back what map(bytes, alignment) returned.
void unmap(void* memory, std::size_t bytes, std::size_t alignment) noexcept;
// Drops the contents of `bytes` (whole pages) at `memory` from the resident
// set, keeping the range mapped (it reads back as zeros). False where that
// is not supported or failed: the memory then stays resident and intact.
bool give_back(void* memory, std::size_t bytes) noexcept;
// True where give_back can succeed.
bool gives_back() noexcept;

}  // namespace leanchan::internal::pool_os

#endif  // LEANCHAN_SRC_BLOCK_POOL_OS_H_
