// SPDX-License-Identifier: MIT
// leanchan/internal/waiter_queue.h: the channel's intrusive waiter queue.
//
// One pointer in the control block anchors a circular doubly-linked ring of
// caller-owned WaitNodes (no allocation, O(1) append and removal):
//
//   first -> [receive notifier?] -> [first closed watcher?] -> sender 1 -> ... -> sender n
//     ^------------------------------------------------------------------------------'
//
// - The receive notifier, when attached, is always first, so a sender that
//   fires it finds it with one load and no lock (while the receiver's
//   signal word says "firing" it cannot be detached; see
//   ReceiverSignal::fire).
// - At most one closed watcher is in the ring; the others hang off it in
//   their own ring (ClosedWatchNode::group_*).
// - Waiting senders (notifiers, threads, coroutines) follow, oldest first:
//   the first is found by skipping at most two nodes.
//
// Thread-safety: every function requires the channel's list lock, except
// first() with the receive-firing argument above.
#ifndef LEANCHAN_INTERNAL_WAITER_QUEUE_H_
#define LEANCHAN_INTERNAL_WAITER_QUEUE_H_

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/wait_node.h"

namespace leanchan::internal {

class WaiterQueue {
 public:
  // The first node of the ring (the receive notifier if attached).
  // acquire: pairs with attach_receive's release store, for the lock-free
  // reader (a receive firing, after it read the receiver's arming).
  WaitNode* first() const noexcept { return first_.load(std::memory_order_acquire); }

  // Receive notifier: at most one, kept first.
  void attach_receive(WaitNode* node) noexcept;
  // Unlinks the receive notifier if one is attached.
  void detach_receive() noexcept;

  // Appends a waiting sender (kSend or kSendThread) behind every other.
  void push_sender(WaitNode* node) noexcept;
  // The longest-waiting sender, or null.
  WaitNode* first_sender() const noexcept;
  // Unlinks a sender (or the receive notifier) from the ring.
  void remove(WaitNode* node) noexcept;

  // Closed watchers.
  void add_closed_watch(ClosedWatchNode* watch) noexcept;
  void remove_closed_watch(ClosedWatchNode* watch) noexcept;
  bool has_closed_watch() const noexcept;

  // Close: unlinks every sender and closed watcher and returns them as a
  // list chained through `next` (null-terminated), leaving only the receive
  // notifier. The caller then wakes each.
  WaitNode* take_all_but_receive() noexcept;

 private:
  // Links `node` into the ring before `successor`; alone if `successor`
  // is null (an empty ring). first_ is the caller's to set.
  void link_before(WaitNode* node, WaitNode* successor) noexcept;
  WaitNode* closed_watch_slot() const noexcept;  // the ring's closed watcher, or null

  Atomic<WaitNode*> first_{nullptr};
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_WAITER_QUEUE_H_
