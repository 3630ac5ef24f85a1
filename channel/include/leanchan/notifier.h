// SPDX-License-Identifier: MIT
/// @file
/// leanchan/notifier.h: readiness callbacks, so that one thread can serve many
/// channels (an event loop) instead of blocking a thread on each.
///
/// @code
///   leanchan::Notifier notifier(&on_ready, &my_service);  // owned by you
///   rx.set_notifier(notifier);
///   for (;;) {                       // in the event loop, when told "ready":
///     auto r = rx.poll_recv();
///     if (r.ok()) { handle(std::move(r).value()); continue; }
///     if (r.status() == leanchan::PollStatus::kDisconnected) {
///       rx.clear_notifier();         // ended (and drained): stop serving it
///       break;
///     }
///     if (!rx.arm_notifier()) break; // armed: on_ready(&my_service) comes later
///   }                                // (true: a message, or the end, came meanwhile)
/// @endcode
///
/// arm_notifier() returns true once the channel has ended, every time, so a
/// loop must stop on poll_recv()'s kDisconnected, or it spins.
///
/// A Notifier is a function pointer and its argument, plus the links the
/// channel needs: 40 bytes, never allocated by the channel. Arming and firing
/// allocate nothing and take no lock on the receive side; a send notifier is
/// queued in the channel's waiter queue under its small lock.
///
/// Contract:
/// - One-shot: an armed notifier is called at most once, then must be armed
///   again. Calls may be spurious (nothing left to take); none is lost: if
///   arming returns false, the callback will run after the next message is
///   published, the last sender or permit goes, or (send side) a slot frees
///   or the channel closes.
/// - The callback runs on the thread that caused it (a sender, or the
///   receiver for send notifiers; for a send notifier still queued when the
///   channel closes, the thread that closes it: the receiver's close() or
///   drop, or the drop of the last Sender or Permit), outside every channel
///   lock. It must be short and must not call back into this channel's
///   notifier functions.
/// - A notifier must stay alive while attached or armed. clear_notifier()
///   and cancel_notify() return only once its callback is not running.
/// - One use at a time: attached to one receiver, or queued on one sender.
///   set_notifier with a notifier still attached to another receiver, or
///   queued, aborts with a message (it would join the two channels' waiter
///   queues).
/// - Send notifiers wait in the channel's FIFO queue with blocked senders and
///   coroutines. When one fires because a slot freed, that slot is handed to
///   it: nobody else can take it (a plain try_send or send does not use it).
///   Redeem it with Sender::try_send(value, notifier) or
///   try_reserve(notifier), or give it back with cancel_notify(notifier),
///   which passes it to the next waiter. Like a Permit, an unredeemed slot
///   keeps the channel from ending for the receiver; unlike a Permit it is
///   not returned on destruction (a notifier does not know its channel):
///   destroying a notifier that is queued or holds a slot is a bug
///   (it aborts with a message, in every build). Redeem or cancel_notify
///   before dropping
///   the last Sender. If the last Sender (and Permit) goes anyway, the
///   slots still handed to notifiers go back, so that the receiver sees
///   the end; but such a notifier still shows its slot, and is good for
///   nothing more: armed or redeemed on another channel it would use a
///   slot it was never handed there, and its destruction reports the
///   misuse.
/// - A send notifier may go away as soon as the try_send(value, notifier)
///   or try_reserve(notifier) that redeemed its slot returns: if its
///   callback is still returning on the thread that fired it, the redeem
///   waits for it (briefly: callbacks are short). Never redeem from inside
///   the notifier's own callback. A notifier that was armed and not
///   redeemed is withdrawn with cancel_notify() (which returns once its
///   callback is not running) before it goes away.
#ifndef LEANCHAN_NOTIFIER_H_
#define LEANCHAN_NOTIFIER_H_

#include <atomic>

#include "leanchan/fwd.h"
#include "leanchan/internal/contract.h"
#include "leanchan/internal/wait_node.h"

namespace leanchan {

/// A readiness callback: a function pointer and its argument, plus the links the
/// channel needs (40 bytes), owned by the caller. The contract: leanchan/notifier.h.
class Notifier {
 public:
  /// What a notifier calls, with the context given to its constructor.
  using Callback = void (*)(void* context);

  /// A notifier that calls `callback(context)`; neither attached nor armed.
  Notifier(Callback callback, void* context) noexcept {
    node_.callback = callback;
    node_.context = context;
  }
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;
  /// A notifier still attached to a receiver, queued, or holding a slot
  /// would be called, or unlinked, after its end, or keep its slot in use:
  /// that is a misuse, and the destructor prints which and aborts, in every
  /// build (two relaxed loads and a branch; the caller owns the notifier, so
  /// nothing races with them in a correct program). Declare it before the
  /// Receiver it is attached to, so that the receiver, destroyed first,
  /// detaches it; or clear_notifier / cancel_notify first.
  ~Notifier() {
    if (node_.state.load(std::memory_order_relaxed) != internal::WaitNode::kIdle) [[unlikely]] {
      internal::contract_violation_in_destructor(
          "Notifier destroyed while armed or holding a slot (cancel_notify / clear_notifier "
          "first)");
    }
    if (node_.next != nullptr) [[unlikely]] {
      internal::contract_violation_in_destructor(
          "Notifier destroyed while attached to a receiver (clear_notifier first)");
    }
  }

 private:
  template <class T, std::size_t B>
  friend class Sender;
  template <class T, std::size_t B>
  friend class Receiver;
  internal::WaitNode node_;
};

static_assert(sizeof(Notifier) == 40, "docs/design.md states a notifier's size");

/// A send notifier that carries its message, for a sender that is told
/// when its send is done rather than when to retry (an event loop's send):
///
/// @code
///   leanchan::SendNotifier sn(&on_ready, &my_service);  // owned by you
///   // First, and again after each callback:
///   switch (tx.send_or_notify(event, sn)) {
///     case leanchan::SendStatus::kOk: break;     // sent (event moved from)
///     case leanchan::SendStatus::kFull: return;  // queued with it: on_ready comes
///     default: break;                            // kClosed, kNoMemory: still yours
///   }
/// @endcode
///
/// It waits in the channel's FIFO queue like a Notifier. When a slot frees
/// and it is first in line, the thread that freed the slot moves the value
/// into the channel (as it does for a blocked Sender::send), then calls
/// back; so the receiver finds the message without waiting for the owner
/// to run. On close it is called without sending. The contract is
/// Notifier's (one-shot, the callback on the thread that caused it, short,
/// never calling into this channel; alive while queued), and:
/// - From the send_or_notify that returned kFull until the callback, the
///   value is the channel's: leave it where it is and do not touch it.
///   After the callback, call send_or_notify again: it reports kOk if the
///   value went in, and tries again otherwise (a callback may be spurious).
/// - cancel_notify(SendNotifier&) withdraws it and says whether the value
///   went in first. Redeem or withdraw before it goes away: destroying one
///   that is queued or has news the owner has not taken aborts with a
///   message, in every build.
/// - A slot it was handed but could not fill (the block could not be
///   allocated) is its owner's: the next send_or_notify uses it.
/// - Its firing includes the value's move into the channel (and the
///   allocation of a block, if the message opens one): a cancel_notify or
///   send_or_notify that meets a firing waits that long.
/// - While it is queued or has news, only a Sender of the channel it was
///   queued on may look at it, and send_or_notify only with the same value
///   object: anything else aborts with a message.
/// 64 bytes; never allocated by the channel.
class SendNotifier {
 public:
  /// What it calls, with the context given to its constructor.
  using Callback = Notifier::Callback;

  /// A notifier that calls `callback(context)`; not queued.
  SendNotifier(Callback callback, void* context) noexcept {
    node_.node.callback = callback;
    node_.node.context = context;
    node_.node.carries_value = true;
  }
  SendNotifier(const SendNotifier&) = delete;
  SendNotifier& operator=(const SendNotifier&) = delete;
  /// Queued, or holding a sent value or a slot not yet taken by its owner:
  /// a misuse, reported (and aborted) in every build, as ~Notifier.
  ~SendNotifier() {
    if (node_.node.state.load(std::memory_order_relaxed) != internal::WaitNode::kIdle)
        [[unlikely]] {
      internal::contract_violation_in_destructor(
          "SendNotifier destroyed while queued or with news untaken (send_or_notify or "
          "cancel_notify first)");
    }
  }

 private:
  template <class T, std::size_t B>
  friend class Sender;
  internal::SendValueNode node_;
};

static_assert(sizeof(SendNotifier) == 64, "docs/design.md states a notifier's size");

}  // namespace leanchan

#endif  // LEANCHAN_NOTIFIER_H_
