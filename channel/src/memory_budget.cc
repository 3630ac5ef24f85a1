// SPDX-License-Identifier: MIT
// MemoryBudget: the charge (a CAS loop that never lets the held count pass
// the limit), the refund, and the thread's last refusal.
#include "leanchan/memory_budget.h"

#include <algorithm>
#include <cassert>

#include "budget_refusal.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/contract.h"

namespace leanchan {
namespace {

// charge_ = allocations << kCountShift | bytes: bytes <= limit_ <
// 2^kCountShift, so a charge or a refund of both is one add.
constexpr unsigned kCountShift = 40;
constexpr std::uint64_t kBytesMask = (std::uint64_t{1} << kCountShift) - 1;
constexpr std::uint64_t kOneAllocation = std::uint64_t{1} << kCountShift;
static_assert(MemoryBudget::kMaxLimit == kBytesMask);
static_assert(MemoryBudget::kMaxAllocations == (~std::uint64_t{0} >> kCountShift));

std::uint64_t bytes_of(std::uint64_t charge) noexcept {
  return charge & kBytesMask;
}
std::uint64_t allocations_of(std::uint64_t charge) noexcept {
  return charge >> kCountShift;
}

// The budget that refused the calling thread's most recent allocation
// through a MemoryBudget; null if that allocation was not refused. Compared,
// never dereferenced.
thread_local const MemoryBudget* t_last_refusal = nullptr;

}  // namespace

namespace internal {

KeepRefusalRecord::KeepRefusalRecord() noexcept : saved_(t_last_refusal) {}
KeepRefusalRecord::~KeepRefusalRecord() {
  t_last_refusal = static_cast<const MemoryBudget*>(saved_);
}

}  // namespace internal

const char* BudgetExceeded::what() const noexcept {
  return "leanchan::MemoryBudget: allocation refused, the budget's limit would be exceeded";
}

MemoryBudget::MemoryBudget(std::size_t limit_bytes, std::pmr::memory_resource* upstream) noexcept
    : limit_(std::min<std::uint64_t>(limit_bytes, kMaxLimit)), upstream_(upstream) {}

MemoryBudget::~MemoryBudget() {
  // Every channel (and any other user) must be gone: their memory would be
  // refunded to a destroyed budget.
  if (charge_.load(std::memory_order_relaxed) != 0) {
    internal::contract_violation("MemoryBudget destroyed while it still holds allocations");
  }
}

bool MemoryBudget::try_charge(std::size_t bytes) noexcept {
  // The word changes only by this CAS, which stores a charge whose bytes are
  // at most limit_ (and whose count is at most kMaxAllocations), and by
  // the refund, which subtracts exactly what an earlier charge added.
  // Every RMW reads the latest value in the word's modification order,
  // whatever its memory order, so every value the word takes is within the
  // limit: no reader sees the bytes held above it, at any moment (a
  // fetch_add-then-undo would expose the overshoot in between).
  // relaxed (load, success, failure): the count publishes no data; the
  // memory itself is the upstream's, which orders its own reuse.
  std::uint64_t charge = charge_.load(std::memory_order_relaxed);
  do {
    // bytes_of(charge) <= limit_: no wrap.
    if (bytes > limit_ - bytes_of(charge)) return false;
    if (allocations_of(charge) == kMaxAllocations) return false;
  } while (!charge_.compare_exchange_weak(charge, charge + kOneAllocation + bytes,
                                          std::memory_order_relaxed, std::memory_order_relaxed));
  note_high_water(bytes_of(charge) + bytes);
  return true;
}

void MemoryBudget::note_high_water(std::uint64_t held) noexcept {
  // relaxed: a statistic. The mark only rises here; a CAS loop so that two
  // racing charges leave the larger.
  std::uint64_t mark = high_water_.load(std::memory_order_relaxed);
  while (mark < held && !high_water_.compare_exchange_weak(mark, held, std::memory_order_relaxed,
                                                           std::memory_order_relaxed)) {
  }
}

void MemoryBudget::refund(std::size_t bytes) noexcept {
  // relaxed: the count publishes nothing (see try_charge); a charge that
  // reads this refund may go upstream at once, and the upstream, not this
  // count, orders the reuse of the memory.
  charge_.fetch_sub(kOneAllocation + bytes, std::memory_order_relaxed);
}

void* MemoryBudget::do_allocate(std::size_t bytes, std::size_t alignment) {
  t_last_refusal = nullptr;  // a stacked budget below may set it again
  if (!try_charge(bytes)) {
    // relaxed: a statistic.
    refusals_.fetch_add(1, std::memory_order_relaxed);
    if (internal::ChannelState::is_control_block_request(bytes, alignment)) {
      refused_channels_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    }
    t_last_refusal = this;
    throw BudgetExceeded();
  }
  void* memory = nullptr;
  try {
    memory = upstream_->allocate(bytes, alignment);
  } catch (...) {
    refund(bytes);  // undoes this thread's own charge
    throw;
  }
  if (internal::ChannelState::is_control_block_request(bytes, alignment)) {
    // relaxed: a statistic.
    channels_.fetch_add(1, std::memory_order_relaxed);
  }
  return memory;
}

void MemoryBudget::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  // The upstream has the memory back before the refund, so in this thread's
  // order the bytes out through this budget never exceed the limit either.
  upstream_->deallocate(p, bytes, alignment);
  if (internal::ChannelState::is_control_block_request(bytes, alignment)) {
    // relaxed: a statistic.
    channels_.fetch_sub(1, std::memory_order_relaxed);
  }
  refund(bytes);
}

bool MemoryBudget::do_is_equal(const std::pmr::memory_resource& other) const noexcept {
  return this == &other;
}

std::size_t MemoryBudget::held() const noexcept {
  // relaxed: a snapshot.
  return static_cast<std::size_t>(bytes_of(charge_.load(std::memory_order_relaxed)));
}

MemoryBudgetFigures MemoryBudget::figures() const noexcept {
  // relaxed: a snapshot of statistics. held and live_allocations come from
  // one load, so they agree with each other.
  const std::uint64_t charge = charge_.load(std::memory_order_relaxed);
  MemoryBudgetFigures figures;
  figures.limit = limit();
  figures.held = static_cast<std::size_t>(bytes_of(charge));
  figures.live_allocations = static_cast<std::size_t>(allocations_of(charge));
  figures.channels = static_cast<std::size_t>(
      std::min(channels_.load(std::memory_order_relaxed), allocations_of(charge)));
  figures.blocks = figures.live_allocations - figures.channels;
  figures.high_water = static_cast<std::size_t>(high_water_.load(std::memory_order_relaxed));
  figures.refusals = refusals_.load(std::memory_order_relaxed);
  figures.refused_channels =
      std::min(refused_channels_.load(std::memory_order_relaxed), figures.refusals);
  figures.refused_blocks = figures.refusals - figures.refused_channels;
  return figures;
}

void MemoryBudget::reset_high_water() noexcept {
  // relaxed: statistics.
  high_water_.store(bytes_of(charge_.load(std::memory_order_relaxed)), std::memory_order_relaxed);
}

bool MemoryBudget::refused_on_this_thread() const noexcept {
  return t_last_refusal == this;
}

}  // namespace leanchan
