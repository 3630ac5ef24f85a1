// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio/host.h: what AsyncReceiver and AsyncSender share: the
/// executor, the registration with its execution context, the one pending
/// operation, its resumption protocol and cancellation. Internal: include
/// leanchan/asio.h.
#ifndef LEANCHAN_ASIO_HOST_H_
#define LEANCHAN_ASIO_HOST_H_

#include <atomic>
#include <cstdint>
#include <utility>

#include "leanchan/asio/registry.h"
#include "leanchan/asio/resumer.h"

namespace leanchan::asio::internal {

// Derived provides resume(bool inside_initiation), the loop that looks at
// the channel and ends in finish() or in a suspend() that succeeded, and
// detach_notifier(), which detaches its channel notifier (its callback not
// running on return). Derived's destructor calls close_gate() first.
//
// A kick posts a step that holds the object's StepGate, not the object:
// destroying the object while a step is queued, or running on another
// thread of the executor, is safe (the step finds the object gone and does
// nothing, or the destructor waits for it to leave). A step leaves in
// finish(), before the handler can run, or once suspend() succeeded.
template <class Derived, class Executor, class Op>
class OperationHost : private Registered {
 public:
  using executor_type = Executor;
  executor_type get_executor() const noexcept { return executor_; }

  // Cancels the pending operation, if any (see AsyncReceiver for the
  // threads it may come from).
  void cancel() noexcept { request_cancel(generation_.load(std::memory_order_relaxed)); }

 protected:
  // Registers with the executor's execution context (may allocate; throws
  // what that throws).
  explicit OperationHost(const Executor& executor)
      : executor_(executor), registry_(&Registry::of(executor)), gate_(StepGate::create()) {
    registry_->add(this);
  }
  // Derived has closed the gate and detached its notifier already: a
  // pending operation's handler is destroyed, not called.
  ~OperationHost() {
    registry_->remove(this);
    if (op_ != nullptr) op_->destroy();
  }

  // First in Derived's destructor: from here on no posted step touches the
  // object (one running on another thread has left when this returns).
  void close_gate() noexcept { gate_->close(); }

  bool pending() const noexcept { return op_ != nullptr; }
  Op& op() noexcept { return *op_; }

  // The operation waits from now on: cancellable, resumed by kicks. If
  // connecting its cancellation slot throws (the slot allocates its
  // handler), the operation is destroyed, its handler uncalled, and nothing
  // stays pending; the exception goes on to the initiating call.
  template <class TypedOp>
  void adopt(TypedOp* op) {
    // A generation of its own: a cancellation meant for an earlier
    // operation (its slot emitting after it completed, or a cancel() that
    // raced its end) names that one's, and this operation ignores it.
    // relaxed: written by the initiating thread; a step reads it after the
    // post that orders it, and cancel() only needs some recent value.
    const std::uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
    generation_.store(generation, std::memory_order_relaxed);
    try {
      // The slot is cleared on the handler's executor, just before the
      // handler runs (HandlerOp's Completion), so it may emit after the
      // operation completed, even after the object is gone: the handler
      // holds the gate and enters the object only through it.
      connect_cancellation(op->handler(), [gate = gate_, self = this, generation] {
        if (!gate->enter()) return;
        self->request_cancel(generation);
        gate->leave();
      });
    } catch (...) {
      op->destroy();
      throw;
    }
    op_ = op;
  }
  // Whether the pending operation was cancelled. seq_cst: pairs with
  // request_cancel's store (see there).
  bool cancel_requested() const noexcept {
    return cancelled_.load(std::memory_order_seq_cst) ==
           generation_.load(std::memory_order_relaxed);
  }

  // Completes the operation. `args` must not live in the object: a posted
  // step leaves the gate first, and the object may be destroyed from then on
  // (by the handler, or by another thread).
  template <class... Args>
  void finish(bool inside_initiation, Args&&... args) {
    Op* op = std::exchange(op_, nullptr);
    resumer_.end();
    if (!inside_initiation) gate_->leave();
    op->complete(inside_initiation, std::forward<Args>(args)...);
  }
  // After arming the notifier: true if the resumption has ended and waits
  // for a kick (a posted step has left the gate: the caller returns without
  // touching the object); false if a kick came meanwhile (look again).
  bool suspend(bool inside_initiation) noexcept {
    if (!resumer_.suspend()) return false;
    // Still inside: close() waits for this leave(), so the object lives.
    if (!inside_initiation) gate_->leave();
    return true;
  }

  // The channel notifier's callback (context: this host), on another
  // thread: it must not touch the channel, so it only kicks.
  static void on_notify(void* host) noexcept { static_cast<OperationHost*>(host)->kick(); }

  Resumer resumer_;

 private:
  // The step holds a gate reference (copied here, while the object lives)
  // and enters the object only if the gate lets it. Posted, never
  // deferred: a kick comes from whatever code published a message or freed
  // a slot, which may go on, for long or blocking until this very
  // operation has run (also a coroutine that co_spawn runs inline from a
  // handler); a deferred step would wait behind it on its thread while
  // another thread of the context stays idle.
  void kick() noexcept {
    if (resumer_.kick()) {
      net::post(executor_, [gate = gate_, self = static_cast<Derived*>(this)] {
        if (gate->enter()) self->resume(/*inside_initiation=*/false);
      });
    }
  }
  // The flag is set before the kick: a resumption that the kick posts, or
  // that is running (its suspend fails, it looks again), reads the flag
  // after its begin() acquired the kick. seq_cst on both sides also orders
  // it against a resumption that suspends before the kick.
  // `generation`: the operation it is meant for (a stale one is ignored
  // by cancel_requested; its kick costs at most one extra look). Only
  // raises cancelled_: a cancel() that read an older generation and stores
  // late must not undo the cancellation of a newer operation. 64 bits: no
  // wrap-around brings an old value back.
  void request_cancel(std::uint64_t generation) noexcept {
    std::uint64_t seen = cancelled_.load(std::memory_order_relaxed);
    while (seen < generation &&
           !cancelled_.compare_exchange_weak(seen, generation, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
    }
    kick();
  }
  PendingBase* detach_for_shutdown() noexcept override {
    static_cast<Derived*>(this)->detach_notifier();
    return std::exchange(op_, nullptr);
  }

  Executor executor_;
  Registry* registry_;
  Op* op_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};  // the pending (or last) operation's
  std::atomic<std::uint64_t> cancelled_{0};   // the newest generation cancelled
  GateRef gate_;                              // the object's reference; steps it posted hold theirs
};

}  // namespace leanchan::asio::internal

#endif  // LEANCHAN_ASIO_HOST_H_
