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

struct TokioStyle {
  static std::string name() { return "tokio-style"; }
  template <class T>
  static auto make(std::size_t capacity) {
    return tokio_style::channel<T>(capacity);
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

}  // namespace leanchan::bench

#endif  // LEANCHAN_BENCHMARKS_ADAPTERS_H_
