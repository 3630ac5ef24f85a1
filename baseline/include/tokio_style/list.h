// SPDX-License-Identifier: MIT
// tokio_style/list.h: the unbounded block list under the Tokio-style
// channel (docs/tokio_style.md sections 3 and 4): slot claim by fetch_add, the walk to
// a slot's block, growth, the tail release, and the receiver's reclamation
// with up to three reuse attempts behind the tail.
#ifndef TOKIO_STYLE_LIST_H_
#define TOKIO_STYLE_LIST_H_

#include <atomic>
#include <cstddef>
#include <optional>

#include "tokio_style/block.h"

namespace tokio_style {

// The send half (shared by all senders). 16 bytes.
template <class T>
struct ListTx {
  std::atomic<Block<T>*> block_tail;
  std::atomic<std::size_t> tail_position{0};

  explicit ListTx(Block<T>* first) noexcept : block_tail(first) {}

  void push(T&& value) {
    const std::size_t slot_index = tail_position.fetch_add(1, std::memory_order_acquire);
    Block<T>* block = find_block(slot_index);
    block->write(slot_index & kSlotMask, std::move(value));
  }

  // Claims one more position and marks TX_CLOSED in its block.
  void close() {
    const std::size_t index = tail_position.fetch_add(1, std::memory_order_release);
    find_block(index)->tx_close();
  }

  Block<T>* find_block(std::size_t slot_index) {
    const std::size_t start_index = slot_index & kBlockMask;
    const std::size_t offset = slot_index & kSlotMask;
    Block<T>* block = block_tail.load(std::memory_order_acquire);
    // Only a sender whose slot lies further ahead than its offset in the
    // block tries to move the tail (typically the first of a new block).
    bool try_updating_tail = block->distance(start_index) > offset;
    for (;;) {
      if (block->is_at_index(start_index)) return block;
      Block<T>* next = block->next.load(std::memory_order_acquire);
      if (next == nullptr) next = block->grow();
      try_updating_tail = try_updating_tail && block->is_final();
      if (try_updating_tail) {
        Block<T>* expected = block;
        if (block_tail.compare_exchange_strong(expected, next, std::memory_order_release,
                                               std::memory_order_relaxed)) {
          // An RMW, so it is ordered with every slot claim.
          const std::size_t tail = tail_position.fetch_add(0, std::memory_order_release);
          block->tx_release(tail);
        } else {
          try_updating_tail = false;
        }
      }
      block = next;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }

  // Puts a reclaimed block behind the tail (3 attempts), else frees it.
  void reclaim_block(Block<T>* block) noexcept {
    block->reclaim();
    Block<T>* current = block_tail.load(std::memory_order_acquire);
    for (int attempt = 0; attempt < 3; ++attempt) {
      Block<T>* occupied = current->try_push(block);
      if (occupied == nullptr) return;
      current = occupied;
    }
    Block<T>::free(block);
  }
};

// The receive half (receiver only). 24 bytes; Tokio keeps rx_closed beside it.
template <class T>
struct ListRx {
  Block<T>* head;
  std::size_t index = 0;
  Block<T>* free_head;

  explicit ListRx(Block<T>* first) noexcept : head(first), free_head(first) {}

  // Moves the next value into `out` (empty) if it is ready.
  ReadOutcome pop(ListTx<T>& tx, std::optional<T>& out) noexcept {
    if (!try_advancing_head()) return ReadOutcome::kEmpty;
    reclaim_blocks(tx);
    const ReadOutcome outcome = head->read(index & kSlotMask, out);
    if (outcome == ReadOutcome::kValue) ++index;
    return outcome;
  }

  bool try_advancing_head() noexcept {
    const std::size_t block_index = index & kBlockMask;
    for (;;) {
      if (head->is_at_index(block_index)) return true;
      Block<T>* next = head->next.load(std::memory_order_acquire);
      if (next == nullptr) return false;
      head = next;
    }
  }

  // A block may be recycled once the tail moved past it and every position
  // claimed before that move has been read.
  void reclaim_blocks(ListTx<T>& tx) noexcept {
    while (free_head != head) {
      std::size_t observed = 0;
      if (!free_head->observed_tail(&observed) || observed > index) return;
      Block<T>* block = free_head;
      free_head = block->next.load(std::memory_order_relaxed);
      tx.reclaim_block(block);
    }
  }

  // At channel destruction: frees every block from free_head on.
  void free_blocks() noexcept {
    Block<T>* block = free_head;
    while (block != nullptr) {
      Block<T>* next = block->next.load(std::memory_order_relaxed);
      Block<T>::free(block);
      block = next;
    }
    free_head = head = nullptr;
  }
};

}  // namespace tokio_style

#endif  // TOKIO_STYLE_LIST_H_
