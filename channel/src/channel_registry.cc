// SPDX-License-Identifier: MIT
// ChannelRegistry: the list (a vector; each channel's control block holds
// its index, so unlisting is a swap with the last entry) and the walk that
// keeps the n largest in a heap.
#include "leanchan/channel_registry.h"

#include <algorithm>
#include <cassert>

#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/contract.h"

namespace leanchan {
namespace {

// The order of figures().top: more bytes first; equal bytes, smaller tag.
bool holds_more(const ChannelUsage& a, const ChannelUsage& b) noexcept {
  return a.bytes != b.bytes ? a.bytes > b.bytes : a.tag < b.tag;
}

}  // namespace

ChannelRegistry::~ChannelRegistry() {
  // A listed channel would later unlink itself from the destroyed registry.
  if (!entries_.empty()) {
    internal::contract_violation("ChannelRegistry destroyed while channels are listed");
  }
}

std::size_t ChannelRegistry::channels() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void ChannelRegistry::add(internal::ChannelState* state, std::size_t block_bytes,
                          std::uint64_t tag) {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back({state, block_bytes, tag});  // may throw: nothing listed then
  state->registry_link()->index = entries_.size() - 1;
}

void ChannelRegistry::remove(internal::ChannelState* state) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t index = state->registry_link()->index;
  assert(index < entries_.size() && entries_[index].state == state);
  if (index + 1 != entries_.size()) {
    entries_[index] = entries_.back();
    entries_[index].state->registry_link()->index = index;
  }
  entries_.pop_back();
}

ChannelRegistryFigures ChannelRegistry::figures(std::size_t top_n) const {
  ChannelRegistryFigures figures;
  const std::lock_guard<std::mutex> lock(mutex_);
  figures.channels = entries_.size();
  const std::size_t keep = std::min(top_n, entries_.size());
  figures.top.reserve(keep);  // may throw, before anything is read
  // figures.top is a heap whose front is the smallest kept (by holds_more).
  for (const Entry& entry : entries_) {
    // Listed, so not destroyed: its last handle takes it off under mutex_
    // before it frees anything (ChannelState::leave_registry).
    const ChannelUsage usage{entry.tag, entry.state->memory_usage(entry.block_bytes)};
    figures.bytes += usage.bytes;
    if (keep == 0) continue;
    if (figures.top.size() < keep) {
      figures.top.push_back(usage);
      std::push_heap(figures.top.begin(), figures.top.end(), holds_more);
    } else if (holds_more(usage, figures.top.front())) {
      std::pop_heap(figures.top.begin(), figures.top.end(), holds_more);
      figures.top.back() = usage;
      std::push_heap(figures.top.begin(), figures.top.end(), holds_more);
    }
  }
  std::sort_heap(figures.top.begin(), figures.top.end(), holds_more);
  return figures;
}

}  // namespace leanchan
