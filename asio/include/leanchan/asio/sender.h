// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio/sender.h: a leanchan Sender as an Asio I/O object.
/// Include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_SENDER_H_
#define LEANCHAN_ASIO_SENDER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/asio/host.h"
#include "leanchan/asio/resumer.h"
#include "leanchan/channel.h"

namespace leanchan::asio {

/// Sends into a leanchan channel with Asio completion tokens, waiting for
/// room without a thread:
///
/// @code
///   leanchan::asio::AsyncSender<Event> tx(io.get_executor(), raw_tx);
///   co_await tx.async_send(event, asio::use_awaitable);
/// @endcode
///
/// Completion signature: void(error_code).
///   - {}: the message is in the channel.
///   - experimental::error::channel_closed: the receiver closed the channel
///     or is gone; the message was not sent and has been destroyed (to keep
///     it, try_send() first: its result hands it back).
///   - error::no_memory: the block the message needed could not be
///     allocated (SendStatus::kNoMemory); the message was not sent and has
///     been destroyed; the channel is unchanged.
///   - operation_aborted: cancelled (the handler's cancellation slot, or
///     cancel()) before a slot came; the message was not sent and has been
///     destroyed.
///
/// A waiting send queues in the channel's FIFO waiter queue with blocked
/// threads, coroutines and notifiers, its value lent to the channel (a
/// leanchan::SendNotifier): when a slot frees and it is the longest waiter,
/// the thread that freed the slot moves the value in, so the receiver has
/// it at once, and posts the completion's step. The send is done from that
/// moment: a cancellation that comes later still completes with {}.
/// The handler runs on its associated executor (default: this object's),
/// never inside async_send. The value travels in the one object the
/// operation allocates with the handler's allocator (Asio's recycling
/// allocator for the default one). If that allocation, or connecting the
/// handler's cancellation slot, throws, async_send throws it: nothing is
/// sent or left pending, and the value is destroyed.
///
/// Thread-safety, lifetime and moves: as AsyncReceiver. Destroying it (or
/// shutting down its execution context) with a send pending destroys the
/// handler uncalled; the value is destroyed unsent unless a freed slot took
/// it in before (then it stays sent). Several AsyncSenders (each with its
/// own Sender) may send into one channel concurrently.
///
/// From its base: get_executor(), the object's executor, and cancel(), which
/// cancels the pending operation, if any.
template <class T, std::size_t BlockSize = default_block_size<T>,
          class Executor = net::any_io_executor>
class AsyncSender final
    : public internal::OperationHost<AsyncSender<T, BlockSize, Executor>, Executor,
                                     internal::PendingOp<std::optional<T>, error_code>> {
  using Payload = std::optional<T>;
  using Op = internal::PendingOp<Payload, error_code>;
  using Host = internal::OperationHost<AsyncSender, Executor, Op>;
  friend Host;

 public:
  /// The executor the object's steps run on (Asio's I/O object protocol).
  using executor_type = Executor;
  /// The leanchan Sender it wraps.
  using sender_type = Sender<T, BlockSize>;

  /// Registers with the executor's execution context (may allocate; throws
  /// what that throws).
  AsyncSender(const Executor& executor, sender_type sender)
      : Host(executor), sender_(std::move(sender)) {}
  AsyncSender(const AsyncSender&) = delete;
  AsyncSender& operator=(const AsyncSender&) = delete;
  /// Withdraws a queued send (its value stays unsent); a pending
  /// operation's handler is destroyed, not called; a step already posted for
  /// it does nothing (see OperationHost).
  ~AsyncSender() {
    this->close_gate();
    detach_notifier();
  }

  /// The channel's sender, for everything else (is_closed, capacity,
  /// memory_usage, copies: Sender copy = sender()).
  const sender_type& sender() const noexcept { return sender_; }
  /// Sender::try_send: never waits; a failure hands the value back.
  SendResult<T> try_send(T value) noexcept { return sender_.try_send(std::move(value)); }
  /// Takes the sender out. No operation may be pending; afterwards only
  /// destruction is allowed.
  sender_type release() noexcept {
    assert(!this->pending() && "leanchan::asio: release while async_send is pending");
    detach_notifier();
    return std::move(sender_);
  }

  /// Starts one send of `value`; see the class comment.
  template <class CompletionToken = net::default_completion_token_t<Executor>>
  auto async_send(T value, CompletionToken&& token = net::default_completion_token_t<Executor>()) {
    return net::async_initiate<CompletionToken, void(error_code)>(Initiation{this}, token,
                                                                  std::move(value));
  }

 private:
  // Asio calls it with the handler the token produced and the value (at
  // once, or later for deferred tokens).
  struct Initiation {
    using executor_type = Executor;
    executor_type get_executor() const noexcept { return self->get_executor(); }
    template <class Handler>
    void operator()(Handler&& handler, T&& value) const {
      self->start(std::forward<Handler>(handler), std::move(value));
    }
    AsyncSender* self;
  };

  template <class Handler>
  void start(Handler handler, T&& value) {
    assert(!this->pending() && "leanchan::asio: one async_send at a time");
    assert(attached_ && "leanchan::asio: async_send after release()");
    auto* op = internal::HandlerOp<Executor, Handler, Payload, error_code>::create(
        std::move(handler), this->get_executor(), Payload(std::move(value)));
    this->adopt(op);
    resume(/*inside_initiation=*/true);
  }

  // Looks at the channel: sends, or queues the notifier carrying the value
  // and suspends; the thread that frees a slot for it moves the value in
  // and kicks, and the next look completes. Never two at once.
  void resume(bool inside_initiation) {
    this->resumer_.begin();
    for (;;) {
      Payload& payload = this->op().payload();
      // A cancellation wins over a slot that came meanwhile (passed on),
      // not over a value that went in: an operator|| that cancelled this
      // send must not report a sent value unsent.
      if (this->cancel_requested()) {
        const bool sent = sender_.cancel_notify(notifier_);
        payload.reset();
        return this->finish(inside_initiation,
                            sent ? error_code() : error_code(net::error::operation_aborted));
      }
      const SendStatus status = sender_.send_or_notify(*payload, notifier_);
      if (status == SendStatus::kFull) {
        this->op().hold_work();  // it waits from here on, the value lent to the channel
        LEANCHAN_ASIO_TEST_AFTER_ARM();
        if (this->suspend(inside_initiation)) return;  // a kick will post resume()
        continue;
      }
      payload.reset();
      if (status == SendStatus::kOk) return this->finish(inside_initiation, error_code());
      if (status == SendStatus::kClosed) {
        return this->finish(inside_initiation,
                            error_code(net::experimental::error::channel_closed));
      }
      // kNoMemory: a block could not be allocated; waiting would not help.
      return this->finish(inside_initiation, error_code(net::error::no_memory));
    }
  }

  void detach_notifier() noexcept {
    if (attached_) (void)sender_.cancel_notify(notifier_);
    attached_ = false;
  }

  sender_type sender_;
  SendNotifier notifier_{&Host::on_notify, static_cast<Host*>(this)};
  bool attached_ = true;  // sender_ is ours (not released)
};

}  // namespace leanchan::asio

#endif  // LEANCHAN_ASIO_SENDER_H_
