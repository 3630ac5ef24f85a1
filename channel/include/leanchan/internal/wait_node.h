// SPDX-License-Identifier: MIT
// leanchan/internal/wait_node.h: one waiter of a channel, owned by the
// waiter itself (a Notifier, a coroutine frame, a sleeping thread's stack):
// the channel never allocates one. docs/design.md "The waiter queue" gives
// the protocol; this file gives the states and who may touch what.
#ifndef LEANCHAN_INTERNAL_WAIT_NODE_H_
#define LEANCHAN_INTERNAL_WAIT_NODE_H_

#include <cstdint>

#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

class ChannelState;

struct WaitNode {
  enum class Kind : std::uint8_t {
    kReceive,      // the receiver's notifier (never queued for room)
    kSend,         // a send notifier: wants one slot
    kSendThread,   // a thread sleeping in send/reserve: a ThreadWaitNode
    kClosedWatch,  // waits for close: a ClosedWatchNode
  };

  // `state`: bits [1..0] the phase, bit 2 the grant.
  //   kIdle    not queued; the owner may re-arm, cancel or reuse it
  //   kQueued  linked in the waiter queue (changed only under the list lock)
  //   kFiring  taken off the queue under the lock; the waker is about to call
  //            back (notifier kinds) or store the outcome (thread kinds)
  //   kFiringAwaited  as kFiring, and the owner sleeps on this word until
  //            the waker moves it to kIdle
  //   kGrant   (send kinds) the node holds slots of the bound handed to it:
  //            a sender must redeem them (try_send / try_reserve with the
  //            notifier) or give them back (cancel_notify passes them on).
  //   kSleeping (thread kinds) see below.
  // Only the waker moves kFiring* to kIdle; it touches the node not at all
  // afterwards, except a futex wake on this word (a wake on a word whose
  // owner has gone is harmless: the kernel only hashes the address, and
  // every futex wait in the channel tolerates a spurious wake).
  static constexpr std::uint32_t kIdle = 0;
  static constexpr std::uint32_t kQueued = 1;
  static constexpr std::uint32_t kFiring = 2;
  static constexpr std::uint32_t kFiringAwaited = 3;
  static constexpr std::uint32_t kPhaseMask = 3;
  static constexpr std::uint32_t kGrant = 4;
  // (thread kinds) the owner sleeps on this word: the waker's final
  // exchange sees it and makes the futex wake; a waiter still watching is
  // handed its outcome without a system call.
  static constexpr std::uint32_t kSleeping = 8;
  // (a notifier that carries its value) the waker moved the value into the
  // slot it was handed: set in place of the grant while firing, kept when
  // the firing ends, cleared by the owner (Semaphore::take_carried).
  static constexpr std::uint32_t kSent = 16;

  static constexpr std::uint32_t phase(std::uint32_t state) noexcept { return state & kPhaseMask; }

  // Notifier kinds: called once per firing, outside every lock. Null for
  // thread kinds, which are woken through `state` instead.
  void (*callback)(void*) = nullptr;
  void* context = nullptr;
  // The waiter queue's ring links (list lock).
  WaitNode* next = nullptr;
  WaitNode* prev = nullptr;
  Atomic<std::uint32_t> state{kIdle};
  Kind kind = Kind::kReceive;
  // Fixed for the node's life: it is the first member of a SendValueNode
  // (a SendNotifier), whose value the waker moves in (in the padding: the
  // node stays 40 bytes).
  bool carries_value = false;
};

// A thread blocked in send / reserve / reserve_many: the node lives on its
// stack. Slots are handed to it one by one (in FIFO order) until `needed`
// reaches 0; `wanted - needed` are held while it waits (list lock).
struct ThreadWaitNode {
  // Moves the sender's value (a T, type-erased) into the channel holding
  // the slot just handed over: a send completed by the thread that frees
  // the slot, as Go's channels do, so that the receiver finds the message
  // without waiting for this thread to wake up. False, with the value left
  // where it is, if the blocks for it could not be provided: the waker then
  // clears `push` and the sender, granted its slot, tries by itself.
  using PushFunction = bool (*)(ChannelState& state, void* value);
  WaitNode node;
  std::uint32_t wanted = 0;
  std::uint32_t needed = 0;
  void* value = nullptr;            // send only: the T to move in
  PushFunction push = nullptr;      // send only
  ChannelState* channel = nullptr;  // send only: push's first argument
};

// A send notifier that carries its message (SendNotifier): when a slot is
// handed to it, the waker moves `*value` in with `push` before calling
// back, as it does for a blocked thread. The owner sets the three fields
// before arming (the list lock publishes them to the waker) and leaves the
// value alone until the firing shows kSent, or the node is idle again.
struct SendValueNode {
  WaitNode node;
  void* value = nullptr;
  ThreadWaitNode::PushFunction push = nullptr;
  ChannelState* channel = nullptr;
};

// A waiter for the channel's close (Sender::closed and its awaitable).
// Closed watchers form their own ring (`group_*`, list lock); only the
// first of them is linked into the waiter queue, so that finding the first
// waiting sender never walks past them.
struct ClosedWatchNode {
  WaitNode node;
  ClosedWatchNode* group_next = nullptr;
  ClosedWatchNode* group_prev = nullptr;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_WAIT_NODE_H_
