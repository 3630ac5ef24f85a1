// leanchan/asio/sender.h: a leanchan Sender as an Asio I/O object.
// Include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_SENDER_H_
#define LEANCHAN_ASIO_SENDER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <utility>

#include "leanchan/asio/resumer.h"
#include "leanchan/channel.h"

namespace leanchan::asio {

// Sends into a leanchan channel with Asio completion tokens, waiting for
// room without a thread:
//
//   leanchan::asio::AsyncSender<Event> tx(io.get_executor(), raw_tx);
//   co_await tx.async_send(event, asio::use_awaitable);
//
// Completion signature: void(error_code).
//   - {}: the message is in the channel.
//   - experimental::error::channel_closed: the receiver closed the channel
//     or is gone; the message was not sent and has been destroyed (to keep
//     it, try_send first through sender(), whose result hands it back).
//   - operation_aborted: cancelled (the handler's cancellation slot, or
//     cancel()) before a slot came; the message was not sent and has been
//     destroyed.
// A waiting send queues in the channel's FIFO waiter queue with blocked
// threads, coroutines and notifiers: when a slot frees it is handed to the
// longest waiter, and a cancelled send passes a slot it was handed on.
// The handler runs on its associated executor (default: this object's),
// never inside async_send. The value travels in the one object the pending
// operation allocates with the handler's allocator.
//
// Thread-safety, lifetime and moves: as AsyncReceiver. Several AsyncSenders
// (each with its own Sender) may send into one channel concurrently.
template <class T, std::size_t BlockSize = default_block_size<T>,
          class Executor = net::any_io_executor>
class AsyncSender {
 public:
  using executor_type = Executor;
  using sender_type = Sender<T, BlockSize>;

  AsyncSender(const Executor& executor, sender_type sender) noexcept
      : executor_(executor), sender_(std::move(sender)) {}
  AsyncSender(const AsyncSender&) = delete;
  AsyncSender& operator=(const AsyncSender&) = delete;
  ~AsyncSender() {
    // Withdraws a queued notifier (and passes on a slot it holds); when this
    // returns its callback is not running.
    (void)sender_.cancel_notify(notifier_);
    if (op_ != nullptr) op_->destroy();
  }

  executor_type get_executor() const noexcept { return executor_; }
  // The channel's sender, for everything else (try_send, reserve, clone).
  sender_type& sender() noexcept { return sender_; }

  template <class CompletionToken = net::default_completion_token_t<Executor>>
  auto async_send(T value, CompletionToken&& token = net::default_completion_token_t<Executor>()) {
    return net::async_initiate<CompletionToken, void(error_code)>(Initiation{this}, token,
                                                                  std::move(value));
  }

  // Cancels the pending send, if any: it completes with operation_aborted
  // unless its message went in first. Any thread.
  void cancel() noexcept { request_cancel(); }

 private:
  using Op = internal::PendingOp<T, error_code>;

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
    assert(op_ == nullptr && "leanchan::asio: one async_send at a time");
    auto* op = internal::HandlerOp<Executor, Handler, T, error_code>::create(
        std::move(handler), executor_, std::move(value));
    op_ = op;
    cancelled_.store(false, std::memory_order_relaxed);
    internal::connect_cancellation(op->handler(), [this] { request_cancel(); });
    resume(/*inside_initiation=*/true);
  }

  // As AsyncReceiver::resume: looks at the channel, completes or queues the
  // notifier and suspends. Never two at once.
  void resume(bool inside_initiation) {
    resumer_.begin();
    for (;;) {
      // Uses the slot the notifier was handed, if any.
      SendResult<T> result = sender_.try_send(std::move(op_->payload()), notifier_);
      if (result.ok()) return finish(inside_initiation, error_code());
      if (result.status() == SendStatus::kClosed) {
        return finish(inside_initiation, net::experimental::error::channel_closed);
      }
      op_->payload() = std::move(result).value();  // kFull: the value comes back
      // seq_cst pairs with request_cancel (as in AsyncReceiver).
      if (cancelled_.load(std::memory_order_seq_cst)) {
        (void)sender_.cancel_notify(notifier_);  // passes on a slot it was handed
        return finish(inside_initiation, net::error::operation_aborted);
      }
      if (sender_.notify_when_room(notifier_)) continue;  // room, a held slot, or closed
      LEANCHAN_ASIO_TEST_AFTER_ARM();
      if (resumer_.suspend()) return;  // a kick will post resume()
    }
  }

  void finish(bool inside_initiation, error_code ec) {
    Op* op = std::exchange(op_, nullptr);
    resumer_.end();
    op->complete(inside_initiation, ec);
  }

  // Notifier callback, on the receiver's thread: must not touch the channel.
  static void on_room(void* self) noexcept { static_cast<AsyncSender*>(self)->kick(); }

  void kick() noexcept {
    if (resumer_.kick()) net::post(executor_, [this] { resume(/*inside_initiation=*/false); });
  }

  void request_cancel() noexcept {
    cancelled_.store(true, std::memory_order_seq_cst);
    kick();
  }

  Executor executor_;
  sender_type sender_;
  Notifier notifier_{&on_room, this};
  Op* op_ = nullptr;
  internal::Resumer resumer_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace leanchan::asio

#endif  // LEANCHAN_ASIO_SENDER_H_
