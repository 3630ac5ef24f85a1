// leanchan/asio/receiver.h: a leanchan Receiver as an Asio I/O object.
// Include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_RECEIVER_H_
#define LEANCHAN_ASIO_RECEIVER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

#include "leanchan/asio/registry.h"
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
// outstanding work on both executors and one object allocated with the
// handler's associated allocator (allocated before anything is taken: if
// that allocation throws, async_recv throws and the channel is untouched);
// each wake-up posts one step to this object's executor.
//
// Thread-safety: as any Asio I/O object, one operation at a time, started
// from one thread at a time. cancel() may come from any thread while the
// operation is pending, but must not race with the object's destruction
// (a handler that destroys the object runs as soon as the operation
// completes: order cancel() and destruction yourself).
// Lifetime: destroy it before its execution context (as Asio's objects).
// Destroying it with an operation pending destroys the handler uncalled;
// so does shutting down the execution context (the context's destructor),
// which also detaches the channel's notifier, so a coroutine that owns
// this object and waits in it is destroyed with the context.
// Not movable: the channel's notifier points at it.
template <class T, std::size_t BlockSize = default_block_size<T>,
          class Executor = net::any_io_executor>
class AsyncReceiver final : private internal::Registered {
 public:
  using executor_type = Executor;
  using receiver_type = Receiver<T, BlockSize>;

  // Registers with the executor's execution context (may allocate; throws
  // what that throws).
  AsyncReceiver(const Executor& executor, receiver_type receiver)
      : executor_(executor),
        registry_(&internal::Registry::of(executor)),
        receiver_(std::move(receiver)) {
    receiver_.set_notifier(notifier_);
    registry_->add(this);
  }
  AsyncReceiver(const AsyncReceiver&) = delete;
  AsyncReceiver& operator=(const AsyncReceiver&) = delete;
  ~AsyncReceiver() {
    registry_->remove(this);
    // When this returns the callback is not running and will not run again.
    if (attached_) receiver_.clear_notifier();
    if (op_ != nullptr) op_->destroy();
  }

  executor_type get_executor() const noexcept { return executor_; }

  // The channel's receiver, for everything else (len, is_closed,
  // memory_usage). To take a message without waiting, or to close the
  // channel, use try_recv() and close() here.
  const receiver_type& receiver() const noexcept { return receiver_; }
  // Receiver::try_recv. Not while an operation is pending.
  RecvResult<T> try_recv() noexcept {
    assert(op_ == nullptr && "leanchan::asio: try_recv while async_recv is pending");
    return receiver_.try_recv();
  }
  // Receiver::close: refuses later sends; queued messages stay receivable.
  void close() noexcept { receiver_.close(); }
  // Takes the receiver out (its notifier detached). No operation may be
  // pending; afterwards only destruction is allowed.
  receiver_type release() noexcept {
    assert(op_ == nullptr && "leanchan::asio: release while async_recv is pending");
    if (attached_) receiver_.clear_notifier();
    attached_ = false;
    return std::move(receiver_);
  }

  // Starts one receive; see the class comment. O(1) if a message is there.
  template <class CompletionToken = net::default_completion_token_t<Executor>>
  auto async_recv(CompletionToken&& token = net::default_completion_token_t<Executor>()) {
    return net::async_initiate<CompletionToken, void(error_code, std::optional<T>)>(
        Initiation{this}, token);
  }

  // Cancels the pending operation, if any: it completes with
  // operation_aborted unless a message was taken first. See the class
  // comment for the threads it may come from.
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
    assert(attached_ && "leanchan::asio: async_recv after release()");
    // Allocate first: if it throws, nothing was taken from the channel.
    auto* op = HandlerOp<Handler>::create(std::move(handler), executor_, internal::NoPayload{});
    RecvResult<T> first = receiver_.try_recv();
    if (first.status() != RecvStatus::kEmpty) {
      std::optional<T> value;
      if (first.ok()) value.emplace(std::move(first).value());
      // Ready now: post, never call the handler inside the initiating call.
      op->complete(/*post=*/true, error_code(), std::move(value));
      return;
    }
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

  internal::PendingBase* detach_for_shutdown() noexcept override {
    if (attached_) receiver_.clear_notifier();
    attached_ = false;
    return std::exchange(op_, nullptr);
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
  internal::Registry* registry_;
  receiver_type receiver_;
  Notifier notifier_{&on_ready, this};
  Op* op_ = nullptr;
  internal::Resumer resumer_;
  std::atomic<bool> cancelled_{false};
  bool attached_ = true;  // the notifier is attached to receiver_
};

}  // namespace leanchan::asio

#endif  // LEANCHAN_ASIO_RECEIVER_H_
