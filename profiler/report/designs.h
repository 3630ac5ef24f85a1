// SPDX-License-Identifier: MIT
// The designs the memory-table report can measure, by name.
#ifndef LEANCHAN_PROFILER_REPORT_DESIGNS_H_
#define LEANCHAN_PROFILER_REPORT_DESIGNS_H_

#include <cstddef>
#include <functional>
#include <memory_resource>
#include <string>
#include <vector>

#include "leanchan/fwd.h"
#include "memtable.h"

namespace leanchan::report {

using leanchan::Retention;

struct Design {
  std::string name;        // e.g. "leanchan-b8", "tokio-style"
  std::size_t block_size;  // slots per block
  std::string formulas;    // create / fill / drain, in words for the legend
  // Measures one (message size, capacity); the size must be supported.
  std::function<MemoryRow(std::size_t message_bytes, std::size_t capacity)> measure;
  // Many channels of 24-byte messages, made with `retention` (designs
  // without a retention policy ignore it; has_retention says which).
  // `memory`: ChannelOptions::memory for every channel (null: the default);
  // only designs with has_memory_resource take one.
  std::function<ManyChannelsRow(std::size_t channels, std::size_t capacity, std::size_t burst,
                                Retention retention, std::pmr::memory_resource* memory)>
      many_channels;
  bool has_retention = false;
  // Whether its channels take a std::pmr::memory_resource (--memory=pool).
  bool has_memory_resource = false;
};

// A leanchan channel's heap bytes (the default retention: a drain keeps one
// block), for 1-aligned messages of `message_bytes` in blocks of
// `block_size` slots: docs/memory.md's formulas, b = min(B, C): create 64,
// fill 64 + ceil(C/b)·(16 + b·S), drain 64 + 16 + b·S.
Prediction leanchan_prediction(std::size_t message_bytes, std::size_t block_size,
                               std::size_t capacity);

// "none", "one", or the number of blocks kept (Retention::keep(n)).
std::string retain_name(Retention retention);

// Every design, in report order.
const std::vector<Design>& all_designs();
// The message sizes compiled into the report.
const std::vector<std::size_t>& supported_message_sizes();

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_DESIGNS_H_
