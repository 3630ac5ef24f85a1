// SPDX-License-Identifier: MIT
// The list lock (leanchan/internal/list_lock.h): a futex lock in the low
// bits of the block list's list word, whose unlock also publishes the
// senders' block's tag for the senders' seqlock read (BlockList::tail_if_numbered).
#include "leanchan/internal/list_lock.h"

#include "leanchan/internal/block_list.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {
namespace {

const BlockList& list_of(const ListLock* lock) noexcept {
  return *static_cast<const BlockList*>(lock);  // BlockList is the only ListLock
}

}  // namespace

Locked ListLock::lock() const noexcept {
  Atomic<std::uint32_t>& word = list_of(this).list_word_;
  // acquire on success: the holder sees everything the previous holder
  // wrote. After sleeping, the taker keeps the contended mark, since others
  // may sleep too and the unlock must wake one of them.
  // `value`: the word as last read, locked whenever sleep() runs.
  std::uint32_t contended = 0;
  std::uint32_t value = 0;
  const auto taken = [&] {
    value = word.load(std::memory_order_relaxed);
    while ((value & ListWord::kLocked) == 0) {
      if (word.compare_exchange_weak(value, value | ListWord::kLocked | contended,
                                     std::memory_order_acquire, std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  };
  const auto sleep = [&] {
    contended = ListWord::kContended;
    if ((value & ListWord::kContended) == 0 &&
        !word.compare_exchange_weak(value, value | ListWord::kContended, std::memory_order_relaxed,
                                    std::memory_order_relaxed)) {
      return Slept::kLookAgain;
    }
    futex_wait(word, value | ListWord::kContended, nullptr);
    return Slept::kLookAgain;
  };
  (void)spin_then_sleep(kWaitPolicy.list_lock, taken, sleep);
  LEANCHAN_TEST_POINT(kListLocked);
  return Locked{};
}

void ListLock::unlock(const Locked& held) const noexcept {
  const BlockList& list = list_of(this);
  const BlockHeader* tail = list.tail_block_.load(std::memory_order_relaxed);
  // relaxed: under the lock. An empty list shows the tag two before the
  // receiver's block: it covers no block a sender can need, even one that
  // computed its need from the receiver's position before
  // release_if_drained_locked moved it to the next block (see there).
  const std::uint32_t tag =
      tail == nullptr ? list.empty_tag_locked(held) : tail->tag(std::memory_order_relaxed);
  // release: publishes the list (and the senders' block's tag) to the next holder and
  // to seqlock readers, whose acquire load of this word synchronizes with it.
  const std::uint32_t old =
      list.list_word_.exchange(tag << ListWord::kTagShift, std::memory_order_release);
  if ((old & ListWord::kContended) != 0) futex_wake(list.list_word_, 1);
}

}  // namespace leanchan::internal
