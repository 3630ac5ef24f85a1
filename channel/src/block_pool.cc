// SPDX-License-Identifier: MIT
// BlockPool (leanchan/block_pool.h): construction and destruction, the
// own mappings of large requests, the figures. The size-class pages are in
// block_pool_pages.cc; the bookkeeping and its invariants in
// block_pool_state.h.
#include "leanchan/block_pool.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <mutex>
#include <new>

#include "block_pool_state.h"
#include "leanchan/internal/contract.h"

namespace leanchan {
namespace internal::pool {

unsigned thread_shard() noexcept {
  static std::atomic<unsigned> next{0};
  // relaxed: any spread of threads over shards is correct.
  thread_local const unsigned shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

}  // namespace internal::pool

namespace {

namespace os = internal::pool_os;
using internal::pool::kChunkBytes;
using internal::pool::kLargeRecord;
using internal::pool::kMaxChunks;
using internal::pool::LargeRecord;
using internal::pool::Shard;
using internal::pool::thread_shard;
using State = BlockPool::State;
using ChunkHeader = State::ChunkHeader;

std::size_t large_offset(std::size_t alignment) noexcept {
  return std::max(kLargeRecord, alignment);
}

std::size_t large_length(const State& s, std::size_t bytes, std::size_t alignment) noexcept {
  return (large_offset(alignment) + bytes + s.page - 1) / s.page * s.page;
}

// The largest size or alignment an own mapping is asked for: with both at
// most 2^62, the record's offset plus the size, rounded to a page, and the
// over-mapping for the alignment (pool_os::map) stay below 2^64. No
// system maps that much; the request fails there with bad_alloc.
constexpr std::size_t kLargestRequest = std::size_t{1} << 62;

void* allocate_large(State& s, std::size_t bytes, std::size_t alignment) {
  if (bytes > kLargestRequest || alignment > kLargestRequest) throw std::bad_alloc();
  const std::size_t length = large_length(s, bytes, alignment);
  const std::size_t map_alignment = std::max(alignment, s.page);
  void* memory = os::map(length, map_alignment);
  if (memory == nullptr) throw std::bad_alloc();
  auto* record = ::new (memory) LargeRecord{&s.large, nullptr, length, map_alignment};
  {
    std::lock_guard lock(s.large_mutex);
    record->next = s.large.next;
    s.large.next->prev = record;
    s.large.next = record;
  }
  // relaxed: statistics.
  s.large_pages.fetch_add(length / s.page, std::memory_order_relaxed);
  s.mapped_bytes.fetch_add(length, std::memory_order_relaxed);
  return static_cast<unsigned char*>(memory) + large_offset(alignment);
}

void deallocate_large(State& s, void* p, std::size_t alignment) noexcept {
  auto* record =
      reinterpret_cast<LargeRecord*>(static_cast<unsigned char*>(p) - large_offset(alignment));
  {
    std::lock_guard lock(s.large_mutex);
    record->prev->next = record->next;
    record->next->prev = record->prev;
  }
  const std::size_t length = record->mapped;
  // relaxed: statistics.
  s.large_pages.fetch_sub(length / s.page, std::memory_order_relaxed);
  s.mapped_bytes.fetch_sub(length, std::memory_order_relaxed);
  os::unmap(record, length, record->alignment);
}

constexpr std::size_t kTableBytes = kMaxChunks * sizeof(std::atomic<ChunkHeader*>);

}  // namespace

BlockPool::BlockPool() : BlockPool(BlockPoolOptions{}) {}

BlockPool::BlockPool(const BlockPoolOptions& options) {
  const std::size_t page = os::page_size();
  const std::size_t state_bytes = (sizeof(State) + page - 1) / page * page;
  void* memory = os::map(state_bytes, std::max(page, alignof(State)));
  if (memory == nullptr) throw std::bad_alloc();
  void* table = os::map(kTableBytes, page);
  if (table == nullptr) {
    os::unmap(memory, state_bytes, std::max(page, alignof(State)));
    throw std::bad_alloc();
  }
  state_ = ::new (memory) State(options.keep_empty_pages);
  // Zeroed memory is a table of null atomic pointers (never read before a
  // store; entries past chunk_count are never read).
  state_->chunks = static_cast<std::atomic<ChunkHeader*>*>(table);
  // relaxed: a statistic, before any other thread can see the pool.
  state_->mapped_bytes.store(state_bytes + kTableBytes, std::memory_order_relaxed);
}

BlockPool::~BlockPool() {
  State& s = *state_;
  // Unmapping memory still in use would make its users fail later, far
  // from here, or read another pool's memory.
  if (figures().live_allocations != 0) {
    internal::contract_violation("BlockPool destroyed while allocations from it are live");
  }
  // No other thread may use the pool now: relaxed loads, no lock needed.
  for (LargeRecord* record = s.large.next; record != &s.large;) {
    LargeRecord* next = record->next;
    os::unmap(record, record->mapped, record->alignment);
    record = next;
  }
  const std::size_t chunks = std::min(s.chunk_count.load(std::memory_order_relaxed), kMaxChunks);
  for (std::size_t i = 0; i < chunks; ++i) {
    if (ChunkHeader* chunk = s.chunks[i].load(std::memory_order_relaxed)) {
      chunk->~ChunkHeader();
      os::unmap(chunk, kChunkBytes, kChunkBytes);
    }
  }
  os::unmap(s.chunks, kTableBytes, s.page);
  const std::size_t page = s.page;
  const std::size_t state_bytes = (sizeof(State) + page - 1) / page * page;
  s.~State();
  os::unmap(state_, state_bytes, std::max(page, alignof(State)));
}

std::size_t BlockPool::page_size() const noexcept {
  return state_->page;
}

std::size_t BlockPool::size_class(std::size_t bytes, std::size_t alignment) const noexcept {
  if (alignment > state_->page || bytes > kLargestClass) return 0;
  const std::size_t step = std::max(kClassStep, alignment);
  const std::size_t rounded = (std::max(bytes, kSmallestClass) + step - 1) / step * step;
  return rounded <= kLargestClass ? rounded : 0;
}

std::size_t BlockPool::slots_per_page(std::size_t class_bytes) const noexcept {
  return state_->slots_for(class_bytes);
}

bool BlockPool::gives_back_pages() noexcept {
  return os::gives_back();
}

void BlockPool::trim() noexcept {
  internal::pool::trim(*state_);
}

void* BlockPool::do_allocate(std::size_t bytes, std::size_t alignment) {
  assert(std::has_single_bit(alignment));
  State& s = *state_;
  const std::size_t class_bytes = size_class(bytes, alignment);
  void* memory = class_bytes != 0 ? internal::pool::allocate_small(s, class_bytes)
                                  : allocate_large(s, bytes, alignment);
  Shard& shard = s.shards[thread_shard()];
  // relaxed: statistics.
  shard.live_bytes.fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  shard.live_allocations.fetch_add(1, std::memory_order_relaxed);
  return memory;
}

void BlockPool::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  State& s = *state_;
  const std::size_t class_bytes = size_class(bytes, alignment);
  if (class_bytes != 0) {
    internal::pool::deallocate_small(s, p, class_bytes);
  } else {
    deallocate_large(s, p, alignment);
  }
  Shard& shard = s.shards[thread_shard()];
  // relaxed: statistics.
  shard.live_bytes.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  shard.live_allocations.fetch_sub(1, std::memory_order_relaxed);
}

bool BlockPool::do_is_equal(const std::pmr::memory_resource& other) const noexcept {
  return this == &other;
}

BlockPoolFigures BlockPool::figures() const noexcept {
  const State& s = *state_;
  // relaxed: a snapshot of statistics.
  std::int64_t bytes = 0;
  std::int64_t allocations = 0;
  for (const Shard& shard : s.shards) {
    bytes += shard.live_bytes.load(std::memory_order_relaxed);
    allocations += shard.live_allocations.load(std::memory_order_relaxed);
  }
  BlockPoolFigures figures;
  figures.live_bytes = static_cast<std::size_t>(bytes);
  figures.live_allocations = static_cast<std::size_t>(allocations);
  figures.mapped_bytes = s.mapped_bytes.load(std::memory_order_relaxed);
  figures.resident_pages =
      s.open_pages.load(std::memory_order_relaxed) + s.large_pages.load(std::memory_order_relaxed);
  figures.pages_given_back = s.given_back.load(std::memory_order_relaxed);
  figures.kept_empty_pages = s.kept.load(std::memory_order_relaxed);
  figures.page_size = s.page;
  return figures;
}

}  // namespace leanchan
