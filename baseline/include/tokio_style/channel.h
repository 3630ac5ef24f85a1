// SPDX-License-Identifier: MIT
// tokio_style/channel.h: a C++ channel built the way Tokio 1.24's bounded
// mpsc is built (docs/tokio_style.md), the baseline the
// benchmarks and the memory report measure leanchan against. Same API shape
// as leanchan (send, try_send, send_for, recv, try_recv, recv_for,
// recv_many, close), so one benchmark body serves both.
//
// Memory (S = sizeof(T)), exactly as Tokio 1.24 measures:
//   create: two allocations, the 176-byte Chan and a first block of 32 + 32*S
//   fill C: 176 + max(1, ceil(C/32)) * (32 + 32*S)   (from a fresh channel)
//   drain:  176 + (1 + min(3, ceil(C/32) - 1)) * (32 + 32*S): the head block
//           plus up to three reclaimed blocks parked behind the tail
// Closing (the last sender leaving) claims one more position and may
// allocate a block for it, as Tokio does.
#ifndef TOKIO_STYLE_CHANNEL_H_
#define TOKIO_STYLE_CHANNEL_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/internal/futex.h"
#include "leanchan/status.h"
#include "tokio_style/block.h"
#include "tokio_style/list.h"
#include "tokio_style/semaphore.h"

namespace tokio_style {

using leanchan::RecvResult;
using leanchan::RecvStatus;
using leanchan::SendResult;
using leanchan::SendStatus;

// The shared state, laid out as Tokio's ArcInner<Chan>: 176 bytes.
template <class T>
struct Chan {
  std::atomic<std::size_t> strong;   // Arc strong count: every handle
  std::atomic<std::size_t> weak{1};  // Arc weak count (layout only)
  // Notify for rx-closed (32 bytes; layout only: there is no async closed()).
  std::atomic<std::size_t> notify_state{0};
  FutexMutex notify_mutex;
  bool notify_poisoned = false;
  void* notify_head = nullptr;
  void* notify_tail = nullptr;
  ListTx<T> tx;         // 16
  Semaphore semaphore;  // 40
  std::size_t bound;    // 8
  // AtomicWaker for the receiver (24): a state word (0 idle, 1 receiver
  // parked, 2 a registered waker armed, 3 waking it) and the waker's two
  // words, here a callback and its argument (Tokio stores data + vtable).
  std::atomic<std::uint32_t> rx_waker_state{0};
  void* waker_data = nullptr;
  void (*waker_callback)(void*) = nullptr;
  std::atomic<std::size_t> tx_count{1};  // strong senders
  ListRx<T> rx;                          // 24
  bool rx_closed = false;                // + 7 padding

  Chan(std::size_t capacity, Block<T>* first, Waiting waiting) noexcept
      : strong(2), tx(first), semaphore(capacity, waiting), bound(capacity), rx(first) {}

  // AtomicWaker::wake: an RMW on every send; a syscall only if parked, a
  // callback only if a waker is armed.
  void wake_rx() noexcept {
    std::uint32_t state = rx_waker_state.load(std::memory_order_seq_cst);
    for (;;) {
      if (state == 0 || state == 3) {
        // Tokio's wake is an RMW every time: keep that cost.
        rx_waker_state.fetch_or(0, std::memory_order_acq_rel);
        return;
      }
      const std::uint32_t next = state == 1 ? 0 : 3;
      if (!rx_waker_state.compare_exchange_weak(state, next, std::memory_order_acq_rel)) continue;
      if (state == 1) {
        leanchan::internal::futex_wake(rx_waker_state, 1);
      } else {
        waker_callback(waker_data);
        rx_waker_state.store(0, std::memory_order_release);
      }
      return;
    }
  }
  void release_handle() noexcept {
    if (strong.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    for (;;) {  // drop what is left, then every block
      std::optional<T> value;
      if (rx.pop(tx, value) != ReadOutcome::kValue) break;
    }
    rx.free_blocks();
    delete this;
  }
};

template <class T>
class Receiver;

template <class T>
class Sender {
 public:
  Sender(const Sender& other) noexcept : chan_(other.chan_) {
    chan_->tx_count.fetch_add(1, std::memory_order_relaxed);
    chan_->strong.fetch_add(1, std::memory_order_relaxed);
  }
  Sender(Sender&& other) noexcept : chan_(std::exchange(other.chan_, nullptr)) {}
  Sender& operator=(const Sender&) = delete;
  Sender& operator=(Sender&&) = delete;
  ~Sender() {
    if (chan_ == nullptr) return;
    if (chan_->tx_count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      chan_->tx.close();
      chan_->wake_rx();
    }
    chan_->release_handle();
  }

  SendResult<T> send(T value) { return send_with(std::move(value), nullptr); }
  template <class Rep, class Period>
  SendResult<T> send_for(T value, const std::chrono::duration<Rep, Period>& timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    return send_with(std::move(value), &deadline);
  }
  SendResult<T> try_send(T value) {
    switch (chan_->semaphore.try_acquire()) {
      case Acquire::kAcquired: break;
      case Acquire::kNoPermits: return SendResult<T>::failure(SendStatus::kFull, std::move(value));
      default: return SendResult<T>::failure(SendStatus::kClosed, std::move(value));
    }
    push(std::move(value));
    return SendResult<T>::success();
  }
  bool is_closed() const noexcept { return chan_->semaphore.is_closed(); }
  std::size_t capacity() const noexcept { return chan_->semaphore.available(); }
  std::size_t max_capacity() const noexcept { return chan_->bound; }

 private:
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity, Waiting waiting);
  explicit Sender(Chan<T>* chan) noexcept : chan_(chan) {}

  SendResult<T> send_with(T&& value, const leanchan::internal::Deadline* deadline) {
    switch (chan_->semaphore.acquire(deadline)) {
      case Acquire::kAcquired: break;
      case Acquire::kTimedOut:
        return SendResult<T>::failure(SendStatus::kTimedOut, std::move(value));
      default: return SendResult<T>::failure(SendStatus::kClosed, std::move(value));
    }
    push(std::move(value));
    return SendResult<T>::success();
  }
  void push(T&& value) {
    chan_->tx.push(std::move(value));
    chan_->wake_rx();
  }

  Chan<T>* chan_;
};

template <class T>
class Receiver {
 public:
  Receiver(Receiver&& other) noexcept : chan_(std::exchange(other.chan_, nullptr)) {}
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;
  Receiver& operator=(Receiver&&) = delete;
  ~Receiver() {
    if (chan_ == nullptr) return;
    close();
    for (;;) {
      std::optional<T> value;
      if (chan_->rx.pop(chan_->tx, value) != ReadOutcome::kValue) break;
      chan_->semaphore.release(1);
    }
    chan_->release_handle();
  }

  std::optional<T> recv() {
    std::optional<T> value;
    wait_pop(value, nullptr);
    return value;
  }
  template <class Rep, class Period>
  RecvResult<T> recv_for(const std::chrono::duration<Rep, Period>& timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<T> value;
    const RecvStatus status = wait_pop(value, &deadline);
    if (status == RecvStatus::kOk) return RecvResult<T>::success(std::move(*value));
    return RecvResult<T>::failure(status);
  }
  RecvResult<T> try_recv() {
    std::optional<T> value;
    switch (pop(value)) {
      case ReadOutcome::kValue: return RecvResult<T>::success(std::move(*value));
      case ReadOutcome::kClosed: return RecvResult<T>::failure(RecvStatus::kDisconnected);
      case ReadOutcome::kEmpty: break;
    }
    return RecvResult<T>::failure(is_finished() ? RecvStatus::kDisconnected : RecvStatus::kEmpty);
  }
  std::size_t recv_many(std::vector<T>& out, std::size_t limit) {
    if (limit == 0) return 0;
    std::optional<T> first;
    if (wait_pop(first, nullptr) != RecvStatus::kOk) return 0;
    out.push_back(std::move(*first));
    std::size_t count = 1;
    while (count < limit) {
      std::optional<T> value;
      if (pop(value) != ReadOutcome::kValue) break;
      out.push_back(std::move(*value));
      ++count;
    }
    return count;
  }
  void close() noexcept {
    chan_->rx_closed = true;
    chan_->semaphore.close();
  }

  // The poll-style registration of Tokio's AtomicWaker, for event loops:
  // set a callback, then arm() after draining; true = something is there.
  void set_notifier(void (*callback)(void*), void* context) noexcept {
    disarm();
    chan_->waker_callback = callback;
    chan_->waker_data = context;
  }
  bool arm_notifier() noexcept {
    disarm();
    chan_->rx_waker_state.store(2, std::memory_order_seq_cst);
    // Re-poll after registering, as Tokio's recv does: anything published
    // before the registration is seen here.
    const auto& rx = chan_->rx;
    const bool ready = rx.head != nullptr && has_ready(rx);
    if (ready || is_finished()) {
      disarm();
      return true;
    }
    return false;
  }
  void disarm() noexcept {
    std::uint32_t state = chan_->rx_waker_state.load(std::memory_order_acquire);
    while (state == 2 || state == 3) {
      if (state == 2 && chan_->rx_waker_state.compare_exchange_weak(state, 0)) return;
      if (state == 3) {
        std::this_thread::yield();  // a wake is running the callback
        state = chan_->rx_waker_state.load(std::memory_order_acquire);
      }
    }
  }

 private:
  template <class U>
  friend std::pair<Sender<U>, Receiver<U>> channel(std::size_t capacity, Waiting waiting);
  explicit Receiver(Chan<T>* chan) noexcept : chan_(chan) {}

  ReadOutcome pop(std::optional<T>& out) {
    const ReadOutcome outcome = chan_->rx.pop(chan_->tx, out);
    if (outcome == ReadOutcome::kValue) chan_->semaphore.release(1);  // mutex every time
    return outcome;
  }
  // Whether the next position is published or the close marker is there.
  static bool has_ready(const ListRx<T>& rx) noexcept {
    const Block<T>* block = rx.head;
    const std::size_t start = rx.index & kBlockMask;
    while (block != nullptr && !block->is_at_index(start)) {
      block = block->next.load(std::memory_order_acquire);
    }
    if (block == nullptr) return false;
    const std::uint64_t bits = block->ready_slots.load(std::memory_order_seq_cst);
    return (bits & (std::uint64_t{1} << (rx.index & kSlotMask))) != 0 || (bits & kTxClosed) != 0;
  }
  bool is_finished() const noexcept {
    return chan_->rx_closed && chan_->semaphore.available() == chan_->bound;
  }
  RecvStatus wait_pop(std::optional<T>& out, const leanchan::internal::Deadline* deadline) {
    for (;;) {
      ReadOutcome outcome = pop(out);
      if (outcome == ReadOutcome::kValue) return RecvStatus::kOk;
      if (outcome == ReadOutcome::kClosed || is_finished()) return RecvStatus::kDisconnected;
      if (chan_->semaphore.waiting() == Waiting::kWatchThenSleep) {
        // Watch before sleeping, as leanchan's receiver does: 16 looks with
        // doubling pauses (1..64), then 16 yields.
        const bool ended = watch(
            [&] {
              outcome = pop(out);
              return outcome != ReadOutcome::kEmpty;
            },
            16, 64, 16);
        if (ended && outcome == ReadOutcome::kValue) return RecvStatus::kOk;
        if (ended) return RecvStatus::kDisconnected;
        if (is_finished()) return RecvStatus::kDisconnected;
      }
      // Register, then poll again: a sender's wake after our registration
      // finds the state 1; one before it is seen by this second poll.
      chan_->rx_waker_state.exchange(1, std::memory_order_acq_rel);
      outcome = pop(out);
      if (outcome == ReadOutcome::kValue) return RecvStatus::kOk;
      if (outcome == ReadOutcome::kClosed || is_finished()) return RecvStatus::kDisconnected;
      if (!leanchan::internal::futex_wait(chan_->rx_waker_state, 1, deadline)) {
        chan_->rx_waker_state.store(0, std::memory_order_relaxed);
        outcome = pop(out);
        if (outcome == ReadOutcome::kValue) return RecvStatus::kOk;
        return outcome == ReadOutcome::kClosed ? RecvStatus::kDisconnected : RecvStatus::kTimedOut;
      }
    }
  }

  Chan<T>* chan_;
};

// Creates a channel; throws std::invalid_argument for capacity 0 (Tokio panics).
// `waiting`: kWatchThenSleep (default) waits as leanchan does (bounded
// watching, then a futex sleep), so that comparisons measure the data
// structures; kParkAtOnce sleeps at the first failed attempt, as a thread
// blocked on Tokio's channel parks. Memory is the same either way.
template <class T>
std::pair<Sender<T>, Receiver<T>> channel(std::size_t capacity,
                                          Waiting waiting = Waiting::kWatchThenSleep) {
  if (capacity == 0)
    throw std::invalid_argument("tokio_style::channel: capacity must be at least 1");
  Block<T>* first = Block<T>::allocate(0);
  auto* chan = new Chan<T>(capacity, first, waiting);
  return {Sender<T>(chan), Receiver<T>(chan)};
}

}  // namespace tokio_style

#endif  // TOKIO_STYLE_CHANNEL_H_
