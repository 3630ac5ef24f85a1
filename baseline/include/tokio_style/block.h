// SPDX-License-Identifier: MIT
// tokio_style/block.h: the 32-slot block of the Tokio-style baseline, built
// from Tokio 1.24's design as docs/tokio_style.md describes it. Our own
// code, not a port.
//
// Header, 32 bytes:
//   start_index             absolute position of slot 0 (multiple of 32)
//   next                    atomic successor pointer
//   ready_slots             bits 0..31: slot i written; bit 32 RELEASED (the
//                           tail moved past, recyclable); bit 33 TX_CLOSED
//   observed_tail_position  tail_position when the tail moved past; read only
//                           after RELEASED is seen (acquire)
// followed by 32 slots of T: one allocation of 32 + 32*sizeof(T) bytes.
#ifndef TOKIO_STYLE_BLOCK_H_
#define TOKIO_STYLE_BLOCK_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace tokio_style {

inline constexpr std::size_t kBlockCap = 32;
inline constexpr std::size_t kSlotMask = kBlockCap - 1;
inline constexpr std::size_t kBlockMask = ~kSlotMask;
inline constexpr std::uint64_t kReadyMask = (std::uint64_t{1} << kBlockCap) - 1;
inline constexpr std::uint64_t kReleased = std::uint64_t{1} << kBlockCap;
inline constexpr std::uint64_t kTxClosed = std::uint64_t{1} << (kBlockCap + 1);

enum class ReadOutcome { kValue, kEmpty, kClosed };

template <class T>
struct Block {
  static_assert(alignof(T) <= 8, "the baseline's blocks are 8-aligned");

  std::size_t start_index;
  std::atomic<Block*> next{nullptr};
  std::atomic<std::uint64_t> ready_slots{0};
  std::size_t observed_tail_position = 0;
  alignas(alignof(T)) unsigned char slots[kBlockCap * sizeof(T)];

  explicit Block(std::size_t start) noexcept : start_index(start) {}

  static Block* allocate(std::size_t start) { return new Block(start); }
  static void free(Block* block) noexcept { delete block; }

  T* slot(std::size_t index) noexcept { return reinterpret_cast<T*>(slots) + index; }

  bool is_at_index(std::size_t index) const noexcept { return start_index == index; }

  // Position of `slot_index` relative to this block, in blocks.
  std::size_t distance(std::size_t other_start) const noexcept {
    return (other_start - start_index) / kBlockCap;
  }

  void write(std::size_t slot_index, T&& value) noexcept {
    ::new (static_cast<void*>(slot(slot_index))) T(std::move(value));
    // seq_cst (an x86 lock-or either way): pairs with an armed notifier's
    // re-check (channel.h, arm_notifier), Dekker style.
    ready_slots.fetch_or(std::uint64_t{1} << slot_index, std::memory_order_seq_cst);
  }

  // Moves slot `slot_index` into `out` (empty) if it is ready.
  ReadOutcome read(std::size_t slot_index, std::optional<T>& out) noexcept {
    const std::uint64_t bits = ready_slots.load(std::memory_order_acquire);
    if ((bits & (std::uint64_t{1} << slot_index)) == 0) {
      return (bits & kTxClosed) != 0 ? ReadOutcome::kClosed : ReadOutcome::kEmpty;
    }
    T* stored = std::launder(slot(slot_index));
    out.emplace(std::move(*stored));
    stored->~T();
    return ReadOutcome::kValue;
  }

  void tx_close() noexcept { ready_slots.fetch_or(kTxClosed, std::memory_order_release); }

  bool is_final() const noexcept {
    return (ready_slots.load(std::memory_order_acquire) & kReadyMask) == kReadyMask;
  }

  void tx_release(std::size_t tail_position) noexcept {
    observed_tail_position = tail_position;
    ready_slots.fetch_or(kReleased, std::memory_order_release);
  }

  // The observed tail position, or false if not released yet.
  bool observed_tail(std::size_t* out) const noexcept {
    if ((ready_slots.load(std::memory_order_acquire) & kReleased) == 0) return false;
    *out = observed_tail_position;
    return true;
  }

  void reclaim() noexcept {
    start_index = 0;
    next.store(nullptr, std::memory_order_relaxed);
    ready_slots.store(0, std::memory_order_relaxed);
  }

  // Links `block` as this block's successor (relabelled accordingly); on
  // failure returns the block already there.
  Block* try_push(Block* block) noexcept {
    block->start_index = start_index + kBlockCap;
    Block* expected = nullptr;
    if (next.compare_exchange_strong(expected, block, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      return nullptr;
    }
    return expected;
  }

  // Allocates one successor. If another sender linked one first, our block
  // is appended further down the list instead of being freed, and the
  // winner is returned.
  Block* grow() {
    Block* fresh = allocate(start_index + kBlockCap);
    Block* expected = nullptr;
    if (next.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      return fresh;
    }
    Block* winner = expected;
    Block* current = winner;
    for (;;) {
      Block* occupied = current->try_push(fresh);
      if (occupied == nullptr) break;
      current = occupied;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    return winner;
  }
};

}  // namespace tokio_style

#endif  // TOKIO_STYLE_BLOCK_H_
