// SPDX-License-Identifier: MIT
// A consumer of leanchan::profiler_hook_mimalloc: its counting operator new
// over mimalloc links (mi_malloc_aligned and friends come from mimalloc,
// found by the package config) and counts a channel's control block.
#include <cstdio>

#include "leanchan/channel.h"
#include "leanchan/profiler/heap_probe.h"

int main() {
  leanchan::profiler::HeapProbe probe;
  auto [tx, rx] = leanchan::channel<int>(16);
  const auto bytes = probe.live_bytes();
  std::printf("mimalloc consumer: a channel holds %lld bytes\n", static_cast<long long>(bytes));
  return bytes == 64 ? 0 : 1;
}
