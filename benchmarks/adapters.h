// SPDX-License-Identifier: MIT
// The designs under benchmark, behind one shape: Design::make<T>(capacity)
// returns {sender, receiver}; a sender is copyable and has send(T); a
// receiver has recv() -> std::optional<T>. One benchmark body serves all.
#ifndef LEANCHAN_BENCHMARKS_ADAPTERS_H_
#define LEANCHAN_BENCHMARKS_ADAPTERS_H_

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "leanchan/channel.h"
#include "tokio_style/channel.h"

#if defined(LEANCHAN_HAVE_TBB)
#include <tbb/concurrent_queue.h>
#endif
#if defined(LEANCHAN_HAVE_MOODYCAMEL)
#include <concurrentqueue/blockingconcurrentqueue.h>
#include <concurrentqueue/lightweightsemaphore.h>
#endif

namespace leanchan::bench {

// A message of exactly `Bytes` bytes; byte 0 set to 1 marks "stop".
template <std::size_t Bytes>
struct Message {
  std::array<unsigned char, Bytes> bytes{};
};

template <std::size_t BlockSize>
struct Leanchan {
  static std::string name() { return "leanchan-b" + std::to_string(BlockSize); }
  template <class T>
  static auto make(std::size_t capacity) {
    return leanchan::channel<T, BlockSize>(capacity);
  }
};

// The fair baseline: the Tokio-style data structures waiting as leanchan
// waits (bounded watching, then a futex sleep). The ratios against it
// compare data structures.
struct TokioStyle {
  static std::string name() { return "tokio-style"; }
  template <class T>
  static auto make(std::size_t capacity) {
    return tokio_style::channel<T>(capacity, tokio_style::Waiting::kWatchThenSleep);
  }
};

// The same structures parking at the first failed attempt, as a thread
// blocked on Tokio's channel does. Its ratio against TokioStyle is what the
// waiting policy alone is worth (large at small capacities, where nearly
// every message waits).
struct TokioStyleParkAtOnce {
  static std::string name() { return "tokio-style-park"; }
  template <class T>
  static auto make(std::size_t capacity) {
    return tokio_style::channel<T>(capacity, tokio_style::Waiting::kParkAtOnce);
  }
};

#if defined(LEANCHAN_HAVE_TBB)
// oneTBB's concurrent_bounded_queue, the C++ peer a user might pick.
struct Tbb {
  static std::string name() { return "onetbb-bounded-queue"; }

  template <class T>
  struct Handle {
    std::shared_ptr<tbb::concurrent_bounded_queue<T>> queue;
    struct Ok {
      bool ok() const { return true; }
    };
    Ok send(T value) {
      queue->push(std::move(value));
      return {};
    }
    std::optional<T> recv() {
      T value;
      queue->pop(value);
      return value;
    }
  };

  template <class T>
  static std::pair<Handle<T>, Handle<T>> make(std::size_t capacity) {
    auto queue = std::make_shared<tbb::concurrent_bounded_queue<T>>();
    queue->set_capacity(static_cast<std::ptrdiff_t>(capacity));
    return {Handle<T>{queue}, Handle<T>{queue}};
  }
};
#endif

#if defined(LEANCHAN_HAVE_MOODYCAMEL)
// moodycamel::BlockingConcurrentQueue (Debian libconcurrentqueue-dev), the
// popular lock-free C++ queue. It is unbounded, so it is bounded as a user
// would bound it: a LightweightSemaphore of `capacity` permits that a
// producer takes before enqueue and the consumer returns after dequeue.
// Plain enqueue()/wait_dequeue(), no producer tokens (implicit producers).
// Caveat: at small capacities keep each producer's message count a multiple
// of 32 (docs/peers.md).
struct Moodycamel {
  static std::string name() { return "moodycamel"; }

  template <class T>
  struct State {
    explicit State(std::size_t capacity)
        : room(static_cast<moodycamel::LightweightSemaphore::ssize_t>(capacity)) {}
    moodycamel::BlockingConcurrentQueue<T> queue;
    moodycamel::LightweightSemaphore room;
  };

  template <class T>
  struct Handle {
    std::shared_ptr<State<T>> state;
    struct Ok {
      bool ok() const { return true; }
    };
    Ok send(T value) {
      while (!state->room.wait()) {
      }
      state->queue.enqueue(std::move(value));
      return {};
    }
    std::optional<T> recv() {
      T value;
      state->queue.wait_dequeue(value);
      state->room.signal();
      return value;
    }
  };

  template <class T>
  static std::pair<Handle<T>, Handle<T>> make(std::size_t capacity) {
    auto state = std::make_shared<State<T>>(capacity);
    return {Handle<T>{state}, Handle<T>{state}};
  }
};
#endif

}  // namespace leanchan::bench

#endif  // LEANCHAN_BENCHMARKS_ADAPTERS_H_
