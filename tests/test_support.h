// SPDX-License-Identifier: MIT
// Helpers shared by the channel tests: a message type that counts its own
// constructions and destructions, and stress parameters sized for the build.
#ifndef LEANCHAN_TESTS_TEST_SUPPORT_H_
#define LEANCHAN_TESTS_TEST_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory_resource>
#include <new>
#include <string>

namespace leanchan::testing {

// A notifier's context that counts its callbacks and wakes a waiter on
// `calls` (calls.wait(seen) returns once a callback came after `seen`).
struct CallCounter {
  std::atomic<int> calls{0};
  static void bump(void* self) {
    auto* counter = static_cast<CallCounter*>(self);
    counter->calls.fetch_add(1);
    counter->calls.notify_all();
  }
};

// A memory resource that refuses every allocation while `fail` is set
// (std::bad_alloc, as a pmr resource reports it), else the heap's.
class FailingResource : public std::pmr::memory_resource {
 public:
  bool fail = false;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (fail) throw std::bad_alloc();
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

// Counts live instances; a moved-from instance is still an instance (it is
// destroyed like any other), so "constructed == destroyed" proves each was
// destroyed exactly once, and "live == 0" that nothing leaked.
struct Tracked {
  static inline std::atomic<std::int64_t> constructed{0};
  static inline std::atomic<std::int64_t> destroyed{0};
  static std::int64_t live() { return constructed.load() - destroyed.load(); }
  static void reset() {
    constructed = 0;
    destroyed = 0;
  }

  explicit Tracked(std::uint64_t v) noexcept : value(v) { constructed.fetch_add(1); }
  Tracked(Tracked&& other) noexcept : value(other.value), moved_from(false) {
    other.moved_from = true;
    constructed.fetch_add(1);
  }
  Tracked& operator=(Tracked&&) = delete;
  Tracked(const Tracked&) = delete;
  ~Tracked() { destroyed.fetch_add(1); }

  std::uint64_t value;
  bool moved_from = false;
};

// A sender stalled between its claim and its publish: moving a Stalling
// message that carries a gate (its move into the slot happens after the
// claim) announces itself and waits until the test opens the gate. No
// sleeps: the test waits for `entered`, the sender for `open`.
struct StallGate {
  std::atomic<bool> entered{false};
  std::atomic<bool> open{false};
  void wait_entered() {
    while (!entered.load()) entered.wait(false);
  }
  void release() {
    open = true;
    open.notify_all();
  }
};
struct Stalling {
  int value = 0;
  StallGate* gate = nullptr;
  Stalling(int v, StallGate* g) noexcept : value(v), gate(g) {}
  Stalling(Stalling&& other) noexcept : value(other.value) {
    if (StallGate* g = other.gate) {
      other.gate = nullptr;
      g->entered = true;
      g->entered.notify_all();
      while (!g->open.load()) g->open.wait(false);
    }
  }
  Stalling& operator=(Stalling&&) = delete;
};

// Scales stress iterations: LEANCHAN_STRESS_SCALE (default 1) multiplies
// them, so sanitizer builds in CI can run smaller rounds.
inline double stress_scale() {
  const char* text = std::getenv("LEANCHAN_STRESS_SCALE");
  if (text == nullptr) return 1.0;
  const double scale = std::atof(text);
  return scale > 0 ? scale : 1.0;
}

}  // namespace leanchan::testing

#endif  // LEANCHAN_TESTS_TEST_SUPPORT_H_
