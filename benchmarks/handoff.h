// SPDX-License-Identifier: MIT
// A cache line passed between two threads, with no channel: the floor under
// any message from one thread to another on this machine. One round trip
// moves the line to the other thread's core and back (two moves). On a VM
// the cost changes with where the two threads land (two hyperthreads of one
// core, or two cores), so read it beside figures from the same run. Used by
// the suite's handoff row and by leanchan-peer-bench --handoff.
#ifndef LEANCHAN_BENCHMARKS_HANDOFF_H_
#define LEANCHAN_BENCHMARKS_HANDOFF_H_

#include <atomic>
#include <cstdint>
#include <thread>

namespace leanchan::bench {

class CacheLineHandoff {
 public:
  // Starts the other thread, which answers every turn.
  CacheLineHandoff() : other_([this] { answer(); }) {}
  ~CacheLineHandoff() {
    line_.turn.store(kStop, std::memory_order_release);
    other_.join();
  }
  CacheLineHandoff(const CacheLineHandoff&) = delete;
  CacheLineHandoff& operator=(const CacheLineHandoff&) = delete;

  // Hands the turn over and waits until it comes back.
  void round_trip() noexcept {
    line_.turn.store(next_ + 1, std::memory_order_release);
    next_ += 2;
    wait_for(next_);
  }

 private:
  static constexpr std::uint64_t kStop = ~std::uint64_t{0};
  void wait_for(std::uint64_t turn) const noexcept {
    // acquire/release: a plain hand-off of the turn, as a channel's is.
    while (line_.turn.load(std::memory_order_acquire) != turn) {
    }
  }
  void answer() noexcept {
    for (std::uint64_t turn = 1;; turn += 2) {
      std::uint64_t seen;
      while ((seen = line_.turn.load(std::memory_order_acquire)) != turn) {
        if (seen == kStop) return;
      }
      line_.turn.store(turn + 1, std::memory_order_release);
    }
  }

  struct alignas(64) Line {
    std::atomic<std::uint64_t> turn{0};
  };
  Line line_;
  std::uint64_t next_ = 0;  // the caller's next turn (even)
  std::thread other_;       // last: started once the line is set up
};

}  // namespace leanchan::bench

#endif  // LEANCHAN_BENCHMARKS_HANDOFF_H_
