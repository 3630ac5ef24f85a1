// leanchan/asio/receiver.h: a leanchan Receiver as an Asio I/O object.
// Include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_RECEIVER_H_
#define LEANCHAN_ASIO_RECEIVER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/asio/resumer.h"
#include "leanchan/channel.h"

namespace leanchan::asio {

// Receives from a leanchan channel with Asio completion tokens:
//
//   leanchan::asio::AsyncReceiver<Event> rx(io.get_executor(), std::move(raw_rx));
//   while (std::optional<Event> e = co_await rx.async_recv(asio::use_awaitable))
//     handle(*e);                                  // nullopt: the channel ended
//
// Completion signature: void(error_code, std::optional<T>).
//   - ({}, value): a message was taken.
//   - ({}, nullopt): the channel ended (closed, or every sender gone, and
//     drained), as Receiver::recv() returns nullopt.
//   - (operation_aborted, nullopt): cancelled through the handler's
//     cancellation slot (terminal, partial or total) or cancel(); nothing
//     was taken, so nothing is lost.
// The handler runs on its associated executor (default: this object's),
// never inside async_recv itself. While waiting, the operation holds
// outstanding work on both executors and allocates one object with the
// handler's associated allocator; it takes no thread and no lock.
//
// Thread-safety: as any Asio I/O object, one operation at a time, started
// from one thread at a time. cancel() and cancellation signals may come
// from any thread while the operation is pending (Asio requires the signal
// itself not to race with the operation's completion).
// Lifetime: the object must outlive its pending operation. Destroying it
// while one is pending is allowed only after the executor's execution
// context has stopped for good (the handler is then destroyed, not called).
// Not movable: the channel's notifier points at it.
template <class T, std::size_t BlockSize = default_block_size<T>,
          class Executor = net::any_io_executor>
class AsyncReceiver {
 public:
  using executor_type = Executor;
  using receiver_type = Receiver<T, BlockSize>;

  AsyncReceiver(const Executor& executor, receiver_type receiver) noexcept
      : executor_(executor), receiver_(std::move(receiver)) {
    receiver_.set_notifier(notifier_);
  }
  AsyncReceiver(const AsyncReceiver&) = delete;
  AsyncReceiver& operator=(const AsyncReceiver&) = delete;
  ~AsyncReceiver() {
    // When this returns the callback is not running and will not run again.
    receiver_.clear_notifier();
    if (op_ != nullptr) op_->destroy();
  }

  executor_type get_executor() const noexcept { return executor_; }
  // The channel's receiver, for everything else (try_recv, len, close,
  // memory_usage). Do not receive through it while an operation is pending.
  receiver_type& receiver() noexcept { return receiver_; }

  // Starts one receive; see the class comment. O(1) if a message is there.
  template <class CompletionToken = net::default_completion_token_t<Executor>>
  auto async_recv(CompletionToken&& token = net::default_completion_token_t<Executor>()) {
    return net::async_initiate<CompletionToken, void(error_code, std::optional<T>)>(
        Initiation{this}, token);
  }

  // Cancels the pending operation, if any: it completes with
  // operation_aborted unless a message was taken first. Any thread.
  void cancel() noexcept { request_cancel(); }

 private:
  using Op = internal::PendingOp<internal::NoPayload, error_code, std::optional<T>>;
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
    assert(op_ == nullptr && "leanchan::asio: one async_recv at a time");
    RecvResult<T> first = receiver_.try_recv();
    if (first.status() != RecvStatus::kEmpty) {
      std::optional<T> value;
      if (first.ok()) value.emplace(std::move(first).value());
      // Ready now: post, never call the handler inside the initiating call.
      auto* op = HandlerOp<Handler>::create(std::move(handler), executor_, internal::NoPayload{});
      op->complete(/*post=*/true, error_code(), std::move(value));
      return;
    }
    auto* op = HandlerOp<Handler>::create(std::move(handler), executor_, internal::NoPayload{});
    op_ = op;
    cancelled_.store(false, std::memory_order_relaxed);
    internal::connect_cancellation(op->handler(), [this] { request_cancel(); });
    resume(/*inside_initiation=*/true);
  }

  // Looks at the channel; completes, or arms the notifier and suspends.
  // Runs inside async_recv or as a posted resumption, never two at once.
  void resume(bool inside_initiation) {
    resumer_.begin();
    for (;;) {
      RecvResult<T> result = receiver_.try_recv();
      if (result.ok()) return finish(inside_initiation, error_code(), std::move(result).value());
      if (result.status() == RecvStatus::kDisconnected) {
        return finish(inside_initiation, error_code(), std::nullopt);
      }
      // seq_cst pairs with request_cancel's store and kick (see there).
      if (cancelled_.load(std::memory_order_seq_cst)) {
        (void)receiver_.disarm_notifier();  // its callback is not running after this
        return finish(inside_initiation, net::error::operation_aborted, std::nullopt);
      }
      if (receiver_.arm_notifier()) continue;  // something came meanwhile
      LEANCHAN_ASIO_TEST_AFTER_ARM();
      if (resumer_.suspend()) return;  // a kick will post resume()
    }
  }

  void finish(bool inside_initiation, error_code ec, std::optional<T> value) {
    Op* op = std::exchange(op_, nullptr);
    resumer_.end();
    op->complete(inside_initiation, ec, std::move(value));
  }

  // Notifier callback, on a sender's thread: must not touch the channel.
  static void on_ready(void* self) noexcept { static_cast<AsyncReceiver*>(self)->kick(); }

  void kick() noexcept {
    if (resumer_.kick()) net::post(executor_, [this] { resume(/*inside_initiation=*/false); });
  }

  // The flag is set before the kick: a resumption that the kick posts, or
  // that is running (its suspend fails, it looks again), reads the flag
  // after its begin() acquired the kick. seq_cst on both sides also orders
  // it against a resumption that suspends before the kick.
  void request_cancel() noexcept {
    cancelled_.store(true, std::memory_order_seq_cst);
    kick();
  }

  Executor executor_;
  receiver_type receiver_;
  Notifier notifier_{&on_ready, this};
  Op* op_ = nullptr;
  internal::Resumer resumer_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace leanchan::asio

#endif  // LEANCHAN_ASIO_RECEIVER_H_
