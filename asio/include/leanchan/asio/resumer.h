// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio/resumer.h: the parts the Asio receiver and sender share:
/// which Asio (standalone or Boost), the hand-off between a channel notifier
/// and an operation's resumption, and a type-erased pending operation
/// allocated with its handler's allocator (or Asio's recycling one).
/// Internal: include leanchan/asio.h.
#ifndef LEANCHAN_ASIO_RESUMER_H_
#define LEANCHAN_ASIO_RESUMER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

/// @def LEANCHAN_ASIO_VERSION
/// The version of the Asio in use: ASIO_VERSION, or BOOST_ASIO_VERSION with
/// LEANCHAN_ASIO_USE_BOOST.
#if defined(LEANCHAN_ASIO_USE_BOOST)
#include <boost/asio.hpp>
#include <boost/asio/experimental/channel_error.hpp>
namespace leanchan::asio {
/// The Asio in use: Boost.Asio (LEANCHAN_ASIO_USE_BOOST).
namespace net = ::boost::asio;
/// The error code of the completion signatures: Boost's.
using error_code = ::boost::system::error_code;
}  // namespace leanchan::asio
#define LEANCHAN_ASIO_VERSION BOOST_ASIO_VERSION
#else
#include <asio.hpp>
#include <asio/experimental/channel_error.hpp>
namespace leanchan::asio {
/// The Asio in use: standalone Asio (the default; Boost.Asio with
/// LEANCHAN_ASIO_USE_BOOST).
namespace net = ::asio;
/// The error code of the completion signatures: Asio's.
using error_code = ::asio::error_code;
}  // namespace leanchan::asio
#define LEANCHAN_ASIO_VERSION ASIO_VERSION
#endif
/// @def LEANCHAN_ASIO_HAS_RECYCLING_ALLOCATOR
/// net::recycling_allocator is public from Asio 1.22 (Boost 1.79) on.
#if LEANCHAN_ASIO_VERSION >= 102200
#define LEANCHAN_ASIO_HAS_RECYCLING_ALLOCATOR 1
#else
#define LEANCHAN_ASIO_HAS_RECYCLING_ALLOCATOR 0
#endif

/// @def LEANCHAN_ASIO_TEST_AFTER_ARM
/// A test-only hook between arming the notifier and suspending: the window
/// in which a kick must not be lost. Empty unless a test defines it before
/// including leanchan/asio.h.
#ifndef LEANCHAN_ASIO_TEST_AFTER_ARM
#define LEANCHAN_ASIO_TEST_AFTER_ARM() ((void)0)
#endif

namespace leanchan::asio::internal {

// One pending operation's resumption protocol. The channel's notifier
// callback runs on some other thread (a sender, or the receiver for send
// notifiers); it must not touch the channel, so it only "kicks": if the
// operation's resumption has gone to sleep, the kicker posts it again.
//
//   kIdle --begin--> kActive --suspend--> kWaiting --kick--> kKicked (post)
//                      |  ^                                    |
//                      |  +-------------- begin ---------------+
//                      +--kick--> kKicked: suspend fails, look again
//
// Invariant: at most one resumption is running or posted for an operation,
// because only the kick that moves kWaiting -> kKicked posts one, and only a
// running resumption sets kWaiting. A kick that finds kActive is never lost:
// the running resumption's suspend() fails and it looks at the channel again.
// Spurious kicks (a notifier may fire once more than asked) cost at most one
// extra look.
class Resumer {
 public:
  // The resumption starts (or restarts) looking at the channel.
  // acq_rel: reads a kick's write, so what the kicker saw (a published
  // message, a handed slot, a cancellation flag) happens before this look.
  void begin() noexcept { state_.exchange(kActive, std::memory_order_acq_rel); }

  // After arming the notifier: true if the resumption may end and wait for a
  // kick; false if a kick came since begin() (the caller looks again).
  // acq_rel on success publishes the caller's arming before a kicker's
  // exchange reads kWaiting; on failure the exchange in begin() (called by
  // the retry) acquires the kick.
  bool suspend() noexcept {
    std::uint8_t expected = kActive;
    if (state_.compare_exchange_strong(expected, kWaiting, std::memory_order_acq_rel)) return true;
    begin();
    return false;
  }

  // From a notifier callback or a cancellation: true if the caller must
  // post the resumption (it was waiting). acq_rel: the kicker's prior writes
  // happen before the resumption's begin(); the resumption's arming happens
  // before this kick's return.
  bool kick() noexcept { return state_.exchange(kKicked, std::memory_order_acq_rel) == kWaiting; }

  // The operation completed. release: pairs with a later begin().
  void end() noexcept { state_.store(kIdle, std::memory_order_release); }

 private:
  enum : std::uint8_t { kIdle, kActive, kWaiting, kKicked };
  std::atomic<std::uint8_t> state_{kIdle};
};

// Whether a posted resumption may still enter its I/O object. The object
// may be destroyed while a resumption it posted is queued, or running on
// another thread of its executor; the posted step holds a reference to the
// object's gate (allocated once per object, shared by every step it ever
// posts), not to the object, and enters the object only through it.
//
//   state_ = kGone (the object is being destroyed) | kStep x steps inside
//
// Invariants: close() returns only once no step is inside and none can
// enter any more, so the object's memory outlives every access a step makes.
// A step leaves after its last access to the object and before its
// completion handler can run (a handler may destroy the object on the same
// thread: close() then finds nobody inside). Two steps are inside at once
// only in the moment after one has suspended and before it has left, when
// it no longer touches the object (the Resumer lets one step work at a
// time). A cancellation slot's handler enters too, at any time, to store
// its request and kick (OperationHost::adopt). The gate is deleted with
// its last reference.
class StepGate {
 public:
  StepGate(const StepGate&) = delete;
  StepGate& operator=(const StepGate&) = delete;

  // The object's reference. Throws what operator new throws.
  static StepGate* create() { return new StepGate; }

  // relaxed: a new reference is made from one already held (the object's),
  // and the post that carries it orders it before any use by the step.
  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  // acq_rel: every use of the gate through a reference happens before the
  // deletion by whoever drops the last one.
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // A posted step: true if it may use the object (it must leave() then);
  // false if the object is gone or going (the step must not touch it).
  // relaxed: the outcome is decided by the order of the read-modify-writes
  // on state_ alone (an entry ordered before close()'s fetch_or makes close()
  // wait for its leave(); one ordered after sees kGone); what the object
  // holds reaches the step through the kick and the post (Resumer).
  bool enter() noexcept {
    std::uint32_t state = state_.load(std::memory_order_relaxed);
    do {
      if ((state & kGone) != 0) return false;
    } while (!state_.compare_exchange_weak(state, state + kStep, std::memory_order_relaxed,
                                           std::memory_order_relaxed));
    return true;
  }
  // After the step's last access to the object. release: those accesses
  // happen before close() (acquire) lets the destructor go on.
  void leave() noexcept {
    if (state_.fetch_sub(kStep, std::memory_order_release) == (kGone | kStep)) {
      state_.notify_all();  // the last step out wakes close(); its reference keeps the gate
    }
  }
  // The object's destructor, before it touches anything a step uses: no
  // step enters from now on, and one inside (on another thread) is waited
  // for; it is not running a handler (it left before). acquire (the
  // fetch_or and the loads): synchronizes with every leave(), whose
  // fetch_subs continue one another's release sequences.
  void close() noexcept {
    std::uint32_t state = state_.fetch_or(kGone, std::memory_order_acquire) | kGone;
    while (state != kGone) {
      state_.wait(state, std::memory_order_acquire);
      state = state_.load(std::memory_order_acquire);
    }
  }

 private:
  StepGate() = default;
  ~StepGate() = default;

  static constexpr std::uint32_t kGone = 1;
  static constexpr std::uint32_t kStep = 2;
  std::atomic<std::uint32_t> refs_{1};
  std::atomic<std::uint32_t> state_{0};
};

// One counted reference to a StepGate (what a posted step captures).
class GateRef {
 public:
  explicit GateRef(StepGate* gate) noexcept : gate_(gate) {}
  GateRef(const GateRef& other) noexcept : gate_(other.gate_) { gate_->retain(); }
  GateRef(GateRef&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
  GateRef& operator=(const GateRef&) = delete;
  GateRef& operator=(GateRef&&) = delete;
  ~GateRef() {
    if (gate_ != nullptr) gate_->release();
  }
  StepGate* operator->() const noexcept { return gate_; }

 private:
  StepGate* gate_;
};

// A pending operation whose handler type is erased: allocated with
// OperationAllocator (the handler's associated allocator), holding
// outstanding work on the handler's executor and on the I/O executor (once
// when they are the same) from the moment it first waits (hold_work) until
// it completes. complete() deallocates the operation before the handler
// runs (Asio's rule), then dispatches it (or posts it, when completing
// inside the initiating call) on the handler's associated executor, once;
// complete(false) is called only from a step the I/O executor runs.
// `Payload` travels with the operation (a send's value), so an idle I/O
// object does not hold one.
struct NoPayload {};

// What the registry (registry.h) needs of any pending operation.
class PendingBase {
 public:
  void destroy() noexcept { destroy_(this); }  // without calling the handler

 protected:
  using DestroyFn = void (*)(PendingBase*) noexcept;
  explicit PendingBase(DestroyFn destroy_fn) noexcept : destroy_(destroy_fn) {}
  ~PendingBase() = default;

 private:
  DestroyFn destroy_;
};

template <class Payload, class... Args>
class PendingOp : public PendingBase {
 public:
  Payload& payload() noexcept { return payload_; }
  void complete(bool post, Args... args) { complete_(this, post, std::move(args)...); }
  // Before the operation first waits (arms a notifier): from here until it
  // completes, run() does not return under it. Idempotent. An operation
  // that completes without waiting holds no work: its completion, queued or
  // dispatched on the handler's executor, counts by itself. Terminates if
  // an executor's prefer(outstanding_work.tracked) throws, as Asio's own
  // operations do (Asio's executors' never throw).
  void hold_work() noexcept {
    if (holds_work_) return;
    hold_work_(this);
    holds_work_ = true;
  }

 protected:
  using CompleteFn = void (*)(PendingOp*, bool, Args...);
  using HoldWorkFn = void (*)(PendingOp*) noexcept;
  PendingOp(CompleteFn complete_fn, HoldWorkFn hold_work_fn, DestroyFn destroy_fn,
            Payload&& payload)
      : PendingBase(destroy_fn),
        complete_(complete_fn),
        hold_work_(hold_work_fn),
        payload_(std::move(payload)) {}
  ~PendingOp() = default;

 private:
  CompleteFn complete_;
  HoldWorkFn hold_work_;
  bool holds_work_ = false;  // hold_work() has run
  [[no_unique_address]] Payload payload_;
};

// What an operation is allocated with: the handler's associated allocator;
// when that is the default (std::allocator, as for use_awaitable and plain
// callbacks), Asio's per-thread recycling allocator, which Asio's own
// operations use: a stream of operations on an io thread reuses the blocks
// that thread cached instead of reaching the heap each time (off an io
// thread it is the heap).
template <class Handler, class HandlerAlloc = net::associated_allocator_t<Handler>>
struct OperationAllocator {
  using type = HandlerAlloc;
  static type of(const Handler& handler) noexcept { return net::get_associated_allocator(handler); }
};
#if LEANCHAN_ASIO_HAS_RECYCLING_ALLOCATOR
template <class Handler>
struct OperationAllocator<Handler, std::allocator<void>> {
  using type = net::recycling_allocator<void>;
  static type of(const Handler&) noexcept { return type(); }
};
#endif

// The handler with its arguments, as posted or dispatched on its own
// associated executor. It carries the handler's allocator, for the
// executor's bookkeeping, and no associated executor: Asio wraps a
// function that has one (bind_allocator's forwards the handler's) in a
// work_dispatcher, which takes work again and executes a second time on
// that very executor.
template <class Handler, class... Args>
struct Completion {
  using allocator_type = net::associated_allocator_t<Handler>;
  allocator_type get_allocator() const noexcept { return net::get_associated_allocator(handler); }
  void operator()() {
    // The operation's cancellation handler leaves the slot here, on the
    // handler's executor, where the slot's owner emits (a strand running
    // a parallel_group): cleared from the I/O side, as before, it raced
    // that emit (asio's signal is not thread-safe). It may emit until
    // now: OperationHost::adopt's handler copes.
    auto slot = net::get_associated_cancellation_slot(handler);
    if (slot.is_connected()) slot.clear();
    std::apply([this](Args&... a) { std::move(handler)(std::move(a)...); }, args);
  }
  Handler handler;
  std::tuple<Args...> args;
};

// Whether a handler has no allocator of its own (std::allocator): then a
// receive that is ready at once allocates no operation object. One with
// its own allocator gets its operation allocated before anything is
// taken, so that an allocator that throws loses nothing.
template <class Handler>
inline constexpr bool kDefaultAllocated =
    std::is_same_v<net::associated_allocator_t<Handler>, std::allocator<void>>;

// Completes an operation that is ready inside its initiating call, with no
// operation object: posted (never run inside the initiating call) to the
// handler's associated executor, `io` by default. Throws what the post's
// allocation throws (the handler is then destroyed).
template <class Handler, class IoExecutor, class... Args>
void post_completion(Handler&& handler, const IoExecutor& io, Args... args) {
  using Decayed = std::decay_t<Handler>;
  auto executor = net::get_associated_executor(handler, io);
  net::post(executor, Completion<Decayed, Args...>{std::forward<Handler>(handler),
                                                   std::tuple<Args...>(std::move(args)...)});
}

template <class IoExecutor, class Handler, class Payload, class... Args>
class HandlerOp final : public PendingOp<Payload, Args...> {
  using Base = PendingOp<Payload, Args...>;
  using HandlerExecutor = net::associated_executor_t<Handler, IoExecutor>;
  template <class E>
  using Tracked = std::decay_t<decltype(net::prefer(std::declval<const E&>(),
                                                    net::execution::outstanding_work.tracked))>;
  using Alloc = typename std::allocator_traits<
      typename OperationAllocator<Handler>::type>::template rebind_alloc<HandlerOp>;

 public:
  // Allocates the operation with OperationAllocator. May throw what the
  // allocator throws (then nothing is pending).
  static HandlerOp* create(Handler&& handler, const IoExecutor& io, Payload&& payload) {
    Alloc alloc(OperationAllocator<Handler>::of(handler));
    HandlerOp* op = std::allocator_traits<Alloc>::allocate(alloc, 1);
    try {
      ::new (static_cast<void*>(op)) HandlerOp(std::move(handler), io, std::move(payload));
    } catch (...) {
      std::allocator_traits<Alloc>::deallocate(alloc, op, 1);
      throw;
    }
    return op;
  }
  Handler& handler() noexcept { return handler_; }

 private:
  HandlerOp(Handler&& handler, const IoExecutor& io, Payload&& payload)
      : Base(&do_complete, &do_hold_work, &do_destroy, std::move(payload)),
        io_(io),
        handler_(std::move(handler)) {}

  // Whether two executors are one: then one count of work on it is enough.
  template <class A, class B>
  static bool same_executor(const A& a, const B& b) noexcept {
    if constexpr (std::is_same_v<A, B>) {
      return a == b;
    } else {
      return false;
    }
  }

  // With the allocator that allocated it: taken from the handler before
  // it moves out (a moved-from handler's may differ: one whose allocator
  // comes from its own state).
  static void free(HandlerOp* op, Alloc alloc) noexcept {
    op->~HandlerOp();
    std::allocator_traits<Alloc>::deallocate(alloc, op, 1);
  }
  static Alloc allocator_of(const HandlerOp* op) noexcept {
    return Alloc(OperationAllocator<Handler>::of(op->handler_));
  }
  // Work on the handler's executor, and on the I/O executor unless it is
  // that same executor (a plain callback, use_awaitable on the object's
  // executor), as Asio's own operations hold it.
  static void do_hold_work(Base* base) noexcept {
    auto* op = static_cast<HandlerOp*>(base);
    HandlerExecutor executor = net::get_associated_executor(op->handler_, op->io_);
    if (!same_executor(executor, op->io_)) {
      op->io_work_.emplace(net::prefer(op->io_, net::execution::outstanding_work.tracked));
    }
    op->handler_work_.emplace(net::prefer(executor, net::execution::outstanding_work.tracked));
  }
  static void do_destroy(PendingBase* base) noexcept {
    auto* op = static_cast<HandlerOp*>(static_cast<Base*>(base));
    // The cancellation slot is left as it is: clearing it here, on the
    // destroying thread, could race its owner's emit, and its handler
    // enters the object only through the gate (OperationHost::adopt).
    free(op, allocator_of(op));
  }
  static void do_complete(Base* base, bool post, Args... args) {
    auto* op = static_cast<HandlerOp*>(base);
    Alloc alloc = allocator_of(op);
    Handler handler(std::move(op->handler_));
    HandlerExecutor executor = net::get_associated_executor(handler, op->io_);
    // The work the operation held (if it waited) outlives it until the
    // completion is queued or has run: released after the free, it could
    // let run() return, or stop the I/O executor's context, in between.
    std::optional<Tracked<HandlerExecutor>> handler_work;
    if (op->handler_work_) handler_work.emplace(std::move(*op->handler_work_));
    std::optional<Tracked<IoExecutor>> io_work;
    if (op->io_work_) io_work.emplace(std::move(*op->io_work_));
    const bool on_io_executor = !post && same_executor(executor, op->io_);
    free(op, std::move(alloc));
    Completion<Handler, Args...> call{std::move(handler), std::tuple<Args...>(std::move(args)...)};
    if (post) {
      // Never inside the initiating call; posted, so that any thread of
      // the context may run it (a deferred one would wait for whatever the
      // initiating handler does next).
      net::post(executor, std::move(call));
    } else if (on_io_executor) {
      // A step the I/O executor runs completes it, and the handler's
      // executor is that one: called inside the step, as dispatch runs it
      // from within an io_context, strand or pool (an executor that never
      // runs inline also gets the call here, as async_compose's complete()
      // makes it), without wrapping it in a function object first.
      call();
    } else {
      net::dispatch(executor, std::move(call));
    }
  }

  IoExecutor io_;
  std::optional<Tracked<IoExecutor>> io_work_;            // engaged by do_hold_work
  std::optional<Tracked<HandlerExecutor>> handler_work_;  // likewise
  Handler handler_;
};

// Connects an operation to its handler's cancellation slot, if it has one;
// `on_cancel` runs for terminal, partial and total cancellation (for a
// channel operation they mean the same: nothing has been taken yet).
template <class Handler, class OnCancel>
void connect_cancellation(Handler& handler, OnCancel on_cancel) {
  auto slot = net::get_associated_cancellation_slot(handler);
  if (!slot.is_connected()) return;
  slot.assign([on_cancel](net::cancellation_type type) {
    if ((type & (net::cancellation_type::terminal | net::cancellation_type::partial |
                 net::cancellation_type::total)) != net::cancellation_type::none) {
      on_cancel();
    }
  });
}

}  // namespace leanchan::asio::internal

#endif  // LEANCHAN_ASIO_RESUMER_H_
