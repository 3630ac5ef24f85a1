// SPDX-License-Identifier: MIT
// leanchan/internal/list_lock.h: the channel's one lock, and the token that
// proves it is held.
//
// The list lock guards the block list's structure (block_list.h) and the
// waiter queue (semaphore.h). It is a futex lock in the low two bits of the
// block list's list word, whose other bits carry the senders' block's tag for
// the senders' lock-free (seqlock) read, so the lock belongs to the block
// list: BlockList derives from ListLock, and the waiting layer receives it
// as a `const ListLock&`. A function that needs the lock held takes a
// `const Locked&`, which only lock() makes.
#ifndef LEANCHAN_INTERNAL_LIST_LOCK_H_
#define LEANCHAN_INTERNAL_LIST_LOCK_H_

#include <cstdint>

#include "leanchan/export.h"

namespace leanchan::internal {

// The list word: [31..2] the senders' block's tag (of an empty list: the
// receiver's block's tag minus 2, so that no block is covered) | [1] a
// waiter sleeps on the lock | [0] locked.
struct ListWord {
  static constexpr std::uint32_t kLocked = 1;
  static constexpr std::uint32_t kContended = 2;
  static constexpr std::uint32_t kTagShift = 2;
  static constexpr std::uint32_t tag_of(std::uint32_t word) noexcept { return word >> kTagShift; }
};

// Proof that the caller holds the list lock (from ListLock::lock until it
// passes the token to ListLock::unlock). Neither copied nor made elsewhere.
class Locked {
 public:
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  friend class ListLock;
  Locked() = default;
};

class ListLock {
 public:
  // Spins briefly (kWaitPolicy.list_lock), then sleeps until the lock is free.
  // acquire: the holder sees everything the previous holder wrote.
  [[nodiscard]] Locked lock() const noexcept;
  // Publishes the list (and its senders' block's tag) and wakes one sleeper if any.
  void unlock(const Locked& held) const noexcept;

 protected:
  ListLock() = default;
  ~ListLock() = default;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_LIST_LOCK_H_
