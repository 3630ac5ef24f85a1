// SPDX-License-Identifier: MIT
/// @file
/// leanchan/memory_budget.h: a byte limit shared by many channels, as a
/// std::pmr::memory_resource adaptor.
///
/// @code
///   leanchan::MemoryBudget budget(64 << 20);            // 64 MiB for all of them
///   auto [tx, rx] = leanchan::channel<Event>(1024, {.memory = &budget});
///   if (auto r = tx.try_send(e); r.status() == leanchan::SendStatus::kNoMemory &&
///                                budget.refused_on_this_thread()) {
///     shed(std::move(r).value());                       // over budget, not out of memory
///   }
/// @endcode
///
/// Every allocation is charged its requested size (the `bytes` argument,
/// nothing for alignment or the upstream's overhead) before it goes
/// upstream, and refunded after the upstream has it back. An allocation
/// whose charge would take the bytes held above the limit is refused: it
/// throws BudgetExceeded (a std::bad_alloc, so a channel turns it into
/// SendStatus::kNoMemory and hands the value back, and channel() throws it
/// for a control block), and the refusal is counted. An upstream failure is
/// passed on as the upstream threw it, is not a refusal, and leaves
/// nothing charged.
///
/// A channel's charge (docs/budgets.md): its control block (72 bytes with a
/// resource) and every live block (16 + b*S bytes), including a block a
/// drained Retention::kKeepOne channel keeps, spares, and blocks numbered for
/// reservations. So the held figure equals the sum of the channels'
/// memory_usage().
///
/// Lifetime: the budget must outlive every channel (and every other user)
/// that allocates through it. The destructor aborts with a message if
/// anything is still held.
///
/// Capacity: a limit above kMaxLimit (2^40 - 1 bytes, 1 TiB) acts as
/// kMaxLimit, and a budget holds at most kMaxAllocations (2^24 - 1) live
/// allocations at once; one more is refused as one over the limit.
///
/// Thread-safety: allocate, deallocate and every query may be called from
/// any number of threads at once. No lock: the bytes held and the live
/// allocations share one 64-bit word; the charge is one CAS loop on it, the
/// refund one fetch_sub.
#ifndef LEANCHAN_MEMORY_BUDGET_H_
#define LEANCHAN_MEMORY_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"

namespace leanchan {

/// What MemoryBudget throws when an allocation would exceed its limit.
class LEANCHAN_API BudgetExceeded : public std::bad_alloc {
 public:
  /// Says that a leanchan::MemoryBudget refused an allocation for its limit.
  const char* what() const noexcept override;
};

/// A snapshot of a MemoryBudget. held and live_allocations are read together
/// (one word); channels, high_water and refusals each on their own, so while
/// allocations race the snapshot they may come from slightly different
/// moments. Each is exact when nothing races it. channels counts the
/// requests a channel's control block makes (72 or 88 bytes, aligned to 16,
/// which no block's request is): the channels whose ChannelOptions::memory
/// is this budget, or a budget or resource that passes requests on to it
/// unchanged; behind a pooling resource whose upstream is this budget (a
/// std::pmr pool resource; BlockPool has no upstream) the budget sees the
/// pool's chunks, and counts them all as blocks.
struct MemoryBudgetFigures {
  std::size_t limit = 0;               ///< the limit given at construction
  std::size_t held = 0;                ///< requested bytes charged now; never above limit
  std::size_t high_water = 0;          ///< the most `held` has been since construction or
                                       ///< the last reset_high_water()
  std::size_t live_allocations = 0;    ///< allocations not yet deallocated (blocks and
                                       ///< control blocks)
  std::size_t channels = 0;            ///< of those, channels' control blocks
  std::size_t blocks = 0;              ///< the others: blocks (live_allocations - channels)
  std::uint64_t refusals = 0;          ///< allocations refused for the limit, ever: the
                                       ///< two below together
  std::uint64_t refused_channels = 0;  ///< of those, control blocks (channels not created)
  std::uint64_t refused_blocks = 0;    ///< the others: blocks (sends and reservations
                                       ///< refused, each attempt counted)
};

/// The byte limit of leanchan/memory_budget.h: a memory resource that charges
/// every allocation to the limit before it passes it on to its upstream.
class LEANCHAN_API MemoryBudget final : public std::pmr::memory_resource {
 public:
  /// The highest limit (2^40 - 1 bytes): a higher one acts as this.
  static constexpr std::size_t kMaxLimit = (std::size_t{1} << 40) - 1;
  /// The most live allocations a budget holds at once (2^24 - 1).
  static constexpr std::size_t kMaxAllocations = (std::size_t{1} << 24) - 1;

  /// A budget of `limit_bytes` requested bytes (at most kMaxLimit) over
  /// `upstream` (which must outlive it and be thread-safe, as every resource
  /// a channel uses).
  explicit MemoryBudget(std::size_t limit_bytes, std::pmr::memory_resource* upstream =
                                                     std::pmr::new_delete_resource()) noexcept;
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;
  /// Aborts with a message if anything is held (a channel outlived its budget).
  ~MemoryBudget() override;

  /// The limit in bytes (at most kMaxLimit).
  std::size_t limit() const noexcept { return static_cast<std::size_t>(limit_); }
  /// The resource the budget passes allocations on to.
  std::pmr::memory_resource* upstream() const noexcept { return upstream_; }
  /// Requested bytes charged now (stale on return).
  std::size_t held() const noexcept;
  /// A snapshot of the budget's figures.
  MemoryBudgetFigures figures() const noexcept;
  /// Starts a new high-water mark from the bytes held now. An allocation
  /// racing the reset may be missed by the new mark (it is exact when nothing
  /// races it).
  void reset_high_water() noexcept;

  /// True if the most recent allocation the calling thread made through any
  /// MemoryBudget was refused by this one (thread-local; so after a send
  /// that returned kNoMemory it tells an over-budget refusal from a real
  /// allocation failure). Where budgets are stacked (one's upstream is
  /// another), it names the one that refused. A send that waited may have
  /// its block allocated by the thread that handed it its slot; that
  /// allocation counts for neither thread's record (the handing thread's
  /// stays its own), and if it is refused the sender retries on its own
  /// thread before it fails. Under leanchan::asio a send's allocation may
  /// run on another io thread than its completion handler: ask only from
  /// the thread that made the call that returned kNoMemory.
  bool refused_on_this_thread() const noexcept;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override;

  // Charges `bytes` and one allocation if that keeps the bytes held at or
  // below limit_ and the allocations at or below kMaxAllocations; false
  // (nothing charged) otherwise.
  bool try_charge(std::size_t bytes) noexcept;
  // Takes back one allocation of `bytes` that try_charge charged.
  void refund(std::size_t bytes) noexcept;
  // Raises high_water_ to `held` if it is below.
  void note_high_water(std::uint64_t held) noexcept;

  const std::uint64_t limit_;
  std::pmr::memory_resource* const upstream_;
  // One cache line, written by the threads that allocate and free: nothing
  // else shares it. charge_: live allocations << 40 | bytes held.
  // internal::Atomic: std::atomic, or the schedule explorer's in its build.
  alignas(64) internal::Atomic<std::uint64_t> charge_{0};
  internal::Atomic<std::uint64_t> high_water_{0};
  internal::Atomic<std::uint64_t> refusals_{0};
  internal::Atomic<std::uint64_t> channels_{0};
  internal::Atomic<std::uint64_t> refused_channels_{0};
};

}  // namespace leanchan

#endif  // LEANCHAN_MEMORY_BUDGET_H_
