// SPDX-License-Identifier: MIT
// The three channel designs the proxy runs on (--channel), behind one
// shape, so that one proxy template serves all three:
//
//   Policy::kName
//   Policy::HealthHub(io_context&, apply, visit)   what the services'
//       health channels share: drains them on that io_context, calling
//       apply(user, event) for each event (the leanchan hub calls
//       visit(user) for each service that its ReadySet found ready, which
//       drains that service's slot with drain(apply)). start() once every
//       slot started; quiesce() after the io_context stopped, before the
//       slots die.
//   Policy::HealthSlot(HealthHub&, void* user)    one service's channel of
//       capacity kHealthCapacity; start() begins draining; try_send(event)
//       from any thread.
//   Policy::Dispatch(executor)   one client connection's channel of
//       capacity kDispatchCapacity, used by two coroutines of one strand:
//       send(request) -> bool (false: the receiving side is gone),
//       finish_send() once the reading side ends; recv() -> optional
//       (nullopt: the sending side ended and everything was received),
//       finish_recv() once the writing side ends.
#ifndef LEANCHAN_PROXY_CHANNELS_H_
#define LEANCHAN_PROXY_CHANNELS_H_

#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "leanchan/asio.h"
#include "leanchan/channel.h"
#include "leanchan/ready_set.h"
#include "messages.h"
#include "net.h"
#include "tokio_style/channel.h"

namespace proxy {

inline constexpr std::size_t kHealthCapacity = 16;
inline constexpr std::size_t kDispatchCapacity = 2;

using ApplyHealth = void (*)(void* user, const HealthEvent& event);
using VisitService = void (*)(void* user);
enum class TrySend { kSent, kFull, kClosed };

// A wake-up for one coroutine on a one-thread io_context: notify() may come
// from any thread (it posts to that io_context); wait() returns once a
// notify() not consumed by an earlier wait() has run there. Copies share
// the state.
class Wakeup {
 public:
  explicit Wakeup(const net::any_io_executor& executor)
      : state_(std::make_shared<State>(executor)) {}
  void notify() const {
    // A copy: the posted step may run, and the last other owner go, before
    // post() returns.
    std::shared_ptr<State> state = state_;
    const auto executor = state->timer.get_executor();
    net::post(executor, [state = std::move(state)] {
      state->pending = true;
      state->timer.cancel();
    });
  }
  net::awaitable<void> wait() const {
    while (!state_->pending) {
      state_->timer.expires_at(net::steady_timer::time_point::max());
      (void)co_await state_->timer.async_wait(kTuple);
    }
    state_->pending = false;
  }

 private:
  struct State {
    explicit State(const net::any_io_executor& executor) : timer(executor) {}
    net::steady_timer timer;
    bool pending = false;
  };
  std::shared_ptr<State> state_;
};

// leanchan: health channels drained through one ReadySet, whose eventfd the
// io_context watches; dispatch through leanchan::asio's I/O objects.
struct Leanchan {
  static constexpr std::string_view kName = "leanchan";

  class HealthHub {
   public:
    HealthHub(net::io_context& context, ApplyHealth on_event, VisitService on_ready)
        : descriptor_(context, ready_.fd()), apply_(on_event), visit_(on_ready) {}
    HealthHub(const HealthHub&) = delete;
    HealthHub& operator=(const HealthHub&) = delete;
    // The ReadySet owns the fd.
    ~HealthHub() { (void)descriptor_.release(); }
    void start() { wait(); }
    // Visits what is still queued without applying it, so that no entry is
    // queued when the slots are destroyed on another thread.
    void quiesce() {
      ready_.drain([](leanchan::ReadyEntry&) {});
    }
    leanchan::ReadySet& ready() noexcept { return ready_; }
    ApplyHealth apply() const noexcept { return apply_; }

   private:
    void wait() {
      descriptor_.async_wait(net::posix::descriptor_base::wait_read, [this](error_code error) {
        if (error) return;
        ready_.drain([this](leanchan::ReadyEntry& entry) { visit_(entry.user()); });
        wait();
      });
    }
    leanchan::ReadySet ready_;
    net::posix::stream_descriptor descriptor_;
    ApplyHealth apply_;
    VisitService visit_;
  };

  class HealthSlot {
   public:
    HealthSlot(HealthHub& hub, void* user)
        : HealthSlot(hub, user,
                     leanchan::channel<HealthEvent>(
                         kHealthCapacity, {.retention = leanchan::Retention::kKeepNone})) {}
    void start() { (void)entry_.watch(rx_); }
    TrySend try_send(const HealthEvent& event) {
      auto result = tx_.try_send(event);
      if (result.ok()) return TrySend::kSent;
      // No memory for a block is transient: the checker retries as when full.
      return result.status() == leanchan::SendStatus::kClosed ? TrySend::kClosed : TrySend::kFull;
    }
    // Takes everything there, re-arming until nothing is (ready_set.h).
    void drain(ApplyHealth apply) {
      bool ended = false;
      do {
        for (;;) {
          auto result = rx_.poll_recv();
          if (result.ok()) {
            apply(entry_.user(), result.value());
            continue;
          }
          ended = result.status() == leanchan::PollStatus::kDisconnected;
          break;
        }
      } while (!ended && rx_.arm_notifier());
    }

   private:
    HealthSlot(HealthHub& hub, void* user,
               std::pair<leanchan::Sender<HealthEvent>, leanchan::Receiver<HealthEvent>> ends)
        : entry_(hub.ready(), user), rx_(std::move(ends.second)), tx_(std::move(ends.first)) {}

    leanchan::ReadyEntry entry_;  // first: outlives rx_, which detaches it
    leanchan::Receiver<HealthEvent> rx_;
    leanchan::Sender<HealthEvent> tx_;
  };

  class Dispatch {
   public:
    explicit Dispatch(const net::any_io_executor& executor)
        : Dispatch(executor, leanchan::channel<Request>(kDispatchCapacity)) {}
    net::awaitable<bool> send(const Request& request) {
      auto [error] = co_await tx_->async_send(request, kTuple);
      co_return !error;
    }
    void finish_send() { tx_.reset(); }
    net::awaitable<std::optional<Request>> recv() {
      auto [error, request] = co_await rx_->async_recv(kTuple);
      if (error) co_return std::nullopt;
      co_return request;
    }
    void finish_recv() { rx_.reset(); }

   private:
    Dispatch(const net::any_io_executor& executor,
             std::pair<leanchan::Sender<Request>, leanchan::Receiver<Request>> ends) {
      tx_.emplace(executor, std::move(ends.first));
      rx_.emplace(executor, std::move(ends.second));
    }
    std::optional<leanchan::asio::AsyncSender<Request>> tx_;
    std::optional<leanchan::asio::AsyncReceiver<Request>> rx_;
  };
};

// tokio-style: the baseline's notifier, bridged to Asio: it posts one drain
// step, which try_recv's until empty and re-arms (arm_notifier looks again
// after arming: true means something came meanwhile, so drain again).
struct TokioStyle {
  static constexpr std::string_view kName = "tokio-style";

  class HealthHub {
   public:
    HealthHub(net::io_context& context, ApplyHealth on_event, VisitService)
        : executor_(context.get_executor()), apply_(on_event) {}
    void start() {}
    void quiesce() {}
    const net::io_context::executor_type& executor() const noexcept { return executor_; }
    ApplyHealth apply() const noexcept { return apply_; }

   private:
    net::io_context::executor_type executor_;
    ApplyHealth apply_;
  };

  class HealthSlot {
   public:
    HealthSlot(HealthHub& hub, void* user)
        : HealthSlot(hub, user, tokio_style::channel<HealthEvent>(kHealthCapacity)) {}
    void start() {
      rx_.set_notifier(&HealthSlot::on_notify, this);
      if (rx_.arm_notifier()) schedule();
    }
    TrySend try_send(const HealthEvent& event) {
      auto result = tx_.try_send(event);
      if (result.ok()) return TrySend::kSent;
      return result.status() == leanchan::SendStatus::kFull ? TrySend::kFull : TrySend::kClosed;
    }

   private:
    HealthSlot(HealthHub& hub, void* user,
               std::pair<tokio_style::Sender<HealthEvent>, tokio_style::Receiver<HealthEvent>> ends)
        : hub_(&hub), user_(user), rx_(std::move(ends.second)), tx_(std::move(ends.first)) {}
    // On the sender's thread: only posts. A posted step runs while the slot
    // lives (slots die after the io_context stopped; queued steps are then
    // destroyed unrun).
    static void on_notify(void* self) noexcept { static_cast<HealthSlot*>(self)->schedule(); }
    void schedule() noexcept {
      net::post(hub_->executor(), [this] { drain(); });
    }
    void drain() {
      do {
        for (;;) {
          auto result = rx_.try_recv();
          if (!result.ok()) break;
          hub_->apply()(user_, result.value());
        }
      } while (rx_.arm_notifier());
    }

    HealthHub* hub_;
    void* user_;
    tokio_style::Receiver<HealthEvent> rx_;
    tokio_style::Sender<HealthEvent> tx_;
  };

  class Dispatch {
   public:
    explicit Dispatch(const net::any_io_executor& executor)
        : Dispatch(executor, tokio_style::channel<Request>(kDispatchCapacity)) {}
    Dispatch(const Dispatch&) = delete;
    Dispatch& operator=(const Dispatch&) = delete;
    net::awaitable<bool> send(Request request) {
      for (;;) {
        auto result = tx_->try_send(std::move(request));
        if (result.ok()) co_return true;
        if (result.status() != leanchan::SendStatus::kFull) co_return false;
        request = std::move(result).value();
        sender_waiting_ = true;
        co_await room_.wait();  // the receiving side took one, or ended
        sender_waiting_ = false;
      }
    }
    void finish_send() { tx_.reset(); }
    net::awaitable<std::optional<Request>> recv() {
      for (;;) {
        auto result = rx_->try_recv();
        if (result.ok()) {
          if (sender_waiting_) room_.notify();
          co_return std::move(result).value();
        }
        if (result.status() == leanchan::RecvStatus::kDisconnected) co_return std::nullopt;
        if (rx_->arm_notifier()) continue;
        co_await data_.wait();
      }
    }
    void finish_recv() {
      if (!rx_) return;
      rx_->close();
      rx_->disarm();
      rx_.reset();
      room_.notify();
    }

   private:
    Dispatch(const net::any_io_executor& executor,
             std::pair<tokio_style::Sender<Request>, tokio_style::Receiver<Request>> ends)
        : data_(executor), room_(executor) {
      tx_.emplace(std::move(ends.first));
      rx_.emplace(std::move(ends.second));
      rx_->set_notifier(&Dispatch::on_data, this);
    }
    // On the sender's thread; the receiver, and so this object, lives while
    // it can fire (~Receiver disarms).
    static void on_data(void* self) noexcept { static_cast<Dispatch*>(self)->data_.notify(); }

    Wakeup data_;
    Wakeup room_;
    bool sender_waiting_ = false;  // both sides run on one thread
    std::optional<tokio_style::Sender<Request>> tx_;
    std::optional<tokio_style::Receiver<Request>> rx_;
  };
};

// asio: Boost.Asio's concurrent_channel, received with async_receive.
struct Asio {
  static constexpr std::string_view kName = "asio";
  template <class T>
  using Channel = net::experimental::concurrent_channel<void(error_code, T)>;

  class HealthHub {
   public:
    HealthHub(net::io_context& context, ApplyHealth on_event, VisitService)
        : context_(&context), apply_(on_event) {}
    void start() {}
    void quiesce() {}
    net::io_context& context() const noexcept { return *context_; }
    ApplyHealth apply() const noexcept { return apply_; }

   private:
    net::io_context* context_;
    ApplyHealth apply_;
  };

  class HealthSlot {
   public:
    HealthSlot(HealthHub& hub, void* user)
        : channel_(hub.context(), kHealthCapacity), apply_(hub.apply()), user_(user) {}
    void start() { receive(); }
    TrySend try_send(const HealthEvent& event) {
      if (channel_.try_send(error_code(), event)) return TrySend::kSent;
      return channel_.is_open() ? TrySend::kFull : TrySend::kClosed;
    }

   private:
    // One receive pending at a time; its handler starts the next. At
    // teardown (the io_context stopped) the pending handler is destroyed
    // unrun or runs with an error, touching nothing.
    void receive() {
      channel_.async_receive([this](error_code error, HealthEvent event) {
        if (error) return;
        apply_(user_, event);
        receive();
      });
    }

    Channel<HealthEvent> channel_;
    ApplyHealth apply_;
    void* user_;
  };

  class Dispatch {
   public:
    explicit Dispatch(const net::any_io_executor& executor)
        : channel_(executor, kDispatchCapacity) {}
    net::awaitable<bool> send(const Request& request) {
      auto [error] = co_await channel_.async_send(error_code(), request, kTuple);
      co_return !error;
    }
    // Asio's close() drops what the channel buffers: the end travels as a
    // message of its own, behind the requests.
    net::awaitable<void> finish_send_async() {
      Request end;
      end.kind = Request::Kind::kEnd;
      (void)co_await channel_.async_send(error_code(), end, kTuple);
    }
    net::awaitable<std::optional<Request>> recv() {
      auto [error, request] = co_await channel_.async_receive(kTuple);
      if (error || request.kind == Request::Kind::kEnd) co_return std::nullopt;
      co_return request;
    }
    void finish_recv() {
      channel_.cancel();  // a send waiting for room completes with an error
      channel_.close();
    }

   private:
    Channel<Request> channel_;
  };
};

// finish_send for every design: asio's is a send of its own.
template <class Dispatch>
net::awaitable<void> finish_send(Dispatch& dispatch) {
  if constexpr (requires { dispatch.finish_send_async(); }) {
    co_await dispatch.finish_send_async();
  } else {
    dispatch.finish_send();
    co_return;
  }
}

}  // namespace proxy

#endif  // LEANCHAN_PROXY_CHANNELS_H_
