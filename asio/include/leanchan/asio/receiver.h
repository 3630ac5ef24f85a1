// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio/receiver.h: a leanchan Receiver as an Asio I/O object.
/// Include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_RECEIVER_H_
#define LEANCHAN_ASIO_RECEIVER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/asio/host.h"
#include "leanchan/asio/resumer.h"
#include "leanchan/channel.h"

namespace leanchan::asio {

/// Receives from a leanchan channel with Asio completion tokens:
///
/// @code
///   leanchan::asio::AsyncReceiver<Event> rx(io.get_executor(), std::move(raw_rx));
///   while (std::optional<Event> e = co_await rx.async_recv(asio::use_awaitable))
///     handle(*e);                                  // nullopt: the channel ended
/// @endcode
///
/// Completion signature: void(error_code, std::optional<T>).
///   - ({}, value): a message was taken.
///   - ({}, nullopt): the channel ended (closed, or every sender gone, and
///     drained), as Receiver::recv() returns nullopt.
///   - (operation_aborted, nullopt): cancelled through the handler's
///     cancellation slot (terminal, partial or total) or cancel(); nothing
///     was taken, so nothing is lost.
///
/// The handler runs on its associated executor (default: this object's),
/// never inside async_recv itself. A receive that waits allocates one
/// object with the handler's associated allocator (Asio's recycling
/// allocator for the default one), before anything is taken: if that
/// allocation, or connecting the handler's cancellation slot, throws,
/// async_recv throws, the channel is untouched and nothing is left
/// pending. One that finds a message at once allocates no object with the
/// default allocator (only its posted completion, which docs/asio.md's
/// "Allocation" covers); with an allocator of its own it allocates first. While waiting, the
/// operation holds outstanding work on both executors (once when they are
/// the same); each wake-up posts one step to this object's executor.
///
/// From its base: get_executor(), the object's executor, and cancel(), which
/// cancels the pending operation, if any.
///
/// Thread-safety: as any Asio I/O object, one operation at a time, started
/// from one thread at a time. cancel() may come from any thread while the
/// operation is pending, but must not race with the object's destruction
/// (a handler that destroys the object runs as soon as the operation
/// completes: order cancel() and destruction yourself). Destruction, too,
/// must not race with this object's own calls, but may come from any thread
/// while an operation is pending and other threads run the executor.
/// Lifetime: destroy it before its execution context (as Asio's objects).
/// Destroying it with an operation pending destroys the handler uncalled,
/// also after a message or cancel() posted the operation's next step (the
/// step then does nothing; if another thread runs it first, the operation
/// completes there, once, and the destructor waits for the step to leave);
/// nothing is taken from the channel for a destroyed receive. So does
/// shutting down the execution context (the context's destructor),
/// which also detaches the channel's notifier, so a coroutine that owns
/// this object and waits in it is destroyed with the context.
/// Not movable: the channel's notifier points at it.
template <class T, std::size_t BlockSize = default_block_size<T>,
          class Executor = net::any_io_executor>
class AsyncReceiver final
    : public internal::OperationHost<
          AsyncReceiver<T, BlockSize, Executor>, Executor,
          internal::PendingOp<internal::NoPayload, error_code, std::optional<T>>> {
  using Op = internal::PendingOp<internal::NoPayload, error_code, std::optional<T>>;
  using Host = internal::OperationHost<AsyncReceiver, Executor, Op>;
  friend Host;

 public:
  /// The executor the object's steps run on (Asio's I/O object protocol).
  using executor_type = Executor;
  /// The leanchan Receiver it wraps.
  using receiver_type = Receiver<T, BlockSize>;

  /// Registers with the executor's execution context (may allocate; throws
  /// what that throws).
  AsyncReceiver(const Executor& executor, receiver_type receiver)
      : Host(executor), receiver_(std::move(receiver)) {
    receiver_.set_notifier(notifier_);
  }
  AsyncReceiver(const AsyncReceiver&) = delete;
  AsyncReceiver& operator=(const AsyncReceiver&) = delete;
  /// A pending operation's handler is destroyed, not called; a step already
  /// posted for it does nothing (see OperationHost).
  ~AsyncReceiver() {
    this->close_gate();
    detach_notifier();
  }

  /// The channel's receiver, for everything else (len, is_closed,
  /// memory_usage). To take a message without waiting, or to close the
  /// channel, use try_recv() and close() here.
  const receiver_type& receiver() const noexcept { return receiver_; }
  /// Receiver::try_recv. Not while an operation is pending.
  RecvResult<T> try_recv() noexcept {
    assert(!this->pending() && "leanchan::asio: try_recv while async_recv is pending");
    return receiver_.try_recv();
  }
  /// Receiver::close: refuses later sends; queued messages stay receivable.
  void close() noexcept { receiver_.close(); }
  /// Takes the receiver out (its notifier detached). No operation may be
  /// pending; afterwards only destruction is allowed.
  receiver_type release() noexcept {
    assert(!this->pending() && "leanchan::asio: release while async_recv is pending");
    detach_notifier();
    return std::move(receiver_);
  }

  /// Starts one receive; see the class comment. O(1) if a message is there.
  template <class CompletionToken = net::default_completion_token_t<Executor>>
  auto async_recv(CompletionToken&& token = net::default_completion_token_t<Executor>()) {
    return net::async_initiate<CompletionToken, void(error_code, std::optional<T>)>(
        Initiation{this}, token);
  }

 private:
  template <class Handler>
  using HandlerOp =
      internal::HandlerOp<Executor, Handler, internal::NoPayload, error_code, std::optional<T>>;

  // Asio calls it with the handler the token produced (at once, or later
  // for deferred tokens).
  struct Initiation {
    using executor_type = Executor;
    executor_type get_executor() const noexcept { return self->get_executor(); }
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->start(std::forward<Handler>(handler));
    }
    AsyncReceiver* self;
  };

  template <class Handler>
  void start(Handler handler) {
    assert(!this->pending() && "leanchan::asio: one async_recv at a time");
    assert(attached_ && "leanchan::asio: async_recv after release()");
    // A handler with its own allocator: its operation first, so that
    // nothing is taken if that allocation throws.
    HandlerOp<Handler>* op = nullptr;
    if constexpr (!internal::kDefaultAllocated<Handler>) {
      op = HandlerOp<Handler>::create(std::move(handler), this->get_executor(),
                                      internal::NoPayload{});
    }
    // poll_recv, never try_recv, on the io thread: a sender stalled between
    // its claim and its publish must not hold the thread (kBusy: arm, and
    // that sender's publish kicks the resumption).
    PollResult<T> first = receiver_.poll_recv();
    if (first.status() != PollStatus::kEmpty && first.status() != PollStatus::kBusy) {
      std::optional<T> value;
      if (first.ok()) value.emplace(std::move(first).value());
      // Ready now: posted, never called inside the initiating call.
      if constexpr (internal::kDefaultAllocated<Handler>) {
        internal::post_completion(std::move(handler), this->get_executor(), error_code(),
                                  std::move(value));
      } else {
        op->complete(/*post=*/true, error_code(), std::move(value));
      }
      return;
    }
    if constexpr (internal::kDefaultAllocated<Handler>) {
      // Nothing taken yet: if the allocation throws, nothing is lost.
      op = HandlerOp<Handler>::create(std::move(handler), this->get_executor(),
                                      internal::NoPayload{});
    }
    this->adopt(op);
    resume(/*inside_initiation=*/true);
  }

  // Looks at the channel; completes, or arms the notifier and suspends.
  // Runs inside async_recv or as a posted resumption, never two at once.
  void resume(bool inside_initiation) {
    this->resumer_.begin();
    for (;;) {
      // A cancellation wins over a message that came meanwhile, which stays
      // in the channel: an operator|| or parallel_group that cancelled this
      // receive would throw away the value it completed with.
      if (this->cancel_requested()) {
        (void)receiver_.disarm_notifier();  // its callback is not running after this
        return this->finish(inside_initiation, error_code(net::error::operation_aborted),
                            std::optional<T>());
      }
      PollResult<T> result = receiver_.poll_recv();  // never waits (see start)
      if (result.ok()) {
        return this->finish(inside_initiation, error_code(),
                            std::optional<T>(std::move(result).value()));
      }
      if (result.status() == PollStatus::kDisconnected) {
        return this->finish(inside_initiation, error_code(), std::optional<T>());
      }
      this->op().hold_work();                  // it waits from here on
      if (receiver_.arm_notifier()) continue;  // something came meanwhile
      LEANCHAN_ASIO_TEST_AFTER_ARM();
      if (this->suspend(inside_initiation)) return;  // a kick will post resume()
    }
  }

  void detach_notifier() noexcept {
    if (attached_) receiver_.clear_notifier();
    attached_ = false;
  }

  receiver_type receiver_;
  Notifier notifier_{&Host::on_notify, static_cast<Host*>(this)};
  bool attached_ = true;  // the notifier is attached to receiver_
};

}  // namespace leanchan::asio

#endif  // LEANCHAN_ASIO_RECEIVER_H_
