// SPDX-License-Identifier: MIT
/// @file
/// leanchan/profiler/resident_memory.h: the process's resident memory.
#ifndef LEANCHAN_PROFILER_RESIDENT_MEMORY_H_
#define LEANCHAN_PROFILER_RESIDENT_MEMORY_H_

#include <cstddef>
#include <optional>

namespace leanchan::profiler {

/// Resident set size in bytes, from /proc/self/statm; nullopt if unreadable.
/// Thread-safe; one small file read (no heap allocation).
std::optional<std::size_t> resident_bytes() noexcept;

}  // namespace leanchan::profiler

#endif  // LEANCHAN_PROFILER_RESIDENT_MEMORY_H_
