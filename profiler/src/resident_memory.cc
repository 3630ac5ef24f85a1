// SPDX-License-Identifier: MIT
#include "leanchan/profiler/resident_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace leanchan::profiler {

std::optional<std::size_t> resident_bytes() noexcept {
  // /proc/self/statm: "size resident shared text lib data dt", in pages.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[128];
  const ssize_t length = ::read(fd, buffer, sizeof(buffer) - 1);
  ::close(fd);
  if (length <= 0) return std::nullopt;
  buffer[length] = '\0';
  char* cursor = buffer;
  std::strtoull(cursor, &cursor, 10);  // total program size: skipped
  char* end = nullptr;
  const unsigned long long pages = std::strtoull(cursor, &end, 10);
  if (end == cursor) return std::nullopt;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace leanchan::profiler
