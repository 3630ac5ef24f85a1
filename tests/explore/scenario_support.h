// SPDX-License-Identifier: MIT
// tests/explore/scenario_support.h: what the explorer's scenarios share: a
// message that counts its instances, an event a thread can wait on (through
// the explored futex, so the explorer sees the wait), and the runner.
#ifndef LEANCHAN_TESTS_EXPLORE_SCENARIO_SUPPORT_H_
#define LEANCHAN_TESTS_EXPLORE_SCENARIO_SUPPORT_H_

#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "explorer.h"
#include "leanchan/channel.h"
#include "leanchan/executor.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/internal/futex.h"
#include "leanchan/memory_budget.h"

namespace leanchan::explore_test {

// A message that counts live instances (constructions minus destructions),
// so a scenario can check that every message was destroyed exactly once.
// The counter is not a scheduling point: it is the test's, not the
// channel's.
struct Counted {
  static inline std::atomic<long> live_count{0};
  static long live() { return live_count.load(); }
  static void reset() { live_count = 0; }

  Counted(int s, int q) noexcept : sender(s), seq(q) { live_count.fetch_add(1); }
  Counted(Counted&& other) noexcept : sender(other.sender), seq(other.seq) {
    live_count.fetch_add(1);
  }
  Counted& operator=(Counted&&) = delete;
  ~Counted() { live_count.fetch_sub(1); }

  int sender;
  int seq;
};

// A one-shot event for notifier callbacks: fire() from any thread, wait()
// sleeps on the explored futex until it fired.
// A budget for a scenario whose defect (the explorer's mutants) may make
// the bytes it holds drift: destroyed only if it holds nothing at the end,
// since ~MemoryBudget aborts otherwise, and the scenario's checks have
// reported the drift already. It owns no memory of its own to leak.
class ScenarioBudget {
 public:
  explicit ScenarioBudget(std::size_t limit) {
    ::new (static_cast<void*>(storage_)) MemoryBudget(limit);
  }
  ~ScenarioBudget() {
    if (get().held() == 0) get().~MemoryBudget();
  }
  ScenarioBudget(const ScenarioBudget&) = delete;
  ScenarioBudget& operator=(const ScenarioBudget&) = delete;
  MemoryBudget& get() { return *std::launder(reinterpret_cast<MemoryBudget*>(storage_)); }

 private:
  alignas(MemoryBudget) unsigned char storage_[sizeof(MemoryBudget)];
};

struct Event {
  static void fire(void* self) {
    auto* event = static_cast<Event*>(self);
    event->fired.store(1);
    internal::futex_wake(event->fired, INT_MAX);
  }
  void reset() { fired.store(0); }
  void wait() {
    while (fired.load() == 0) internal::futex_wait(fired, 0, nullptr);
  }
  internal::Atomic<std::uint32_t> fired{0};
};

// Sends `value` the event-loop way: try_send with `notifier` (using a slot
// handed to it), else queue the notifier and wait for `event`, which its
// callback fires: the loop sender.h documents. The notifier may go away as
// soon as the redeeming try_send returns (it waits out a callback still
// returning on the firing thread); reused worker threads make the
// explorer crash if it did not.
template <class T, std::size_t B>
void send_with_notifier(Sender<T, B>& sender, T value, Notifier& notifier, Event& event) {
  for (;;) {
    auto result = sender.try_send(std::move(value), notifier);
    if (result.ok()) return;
    value = std::move(result).value();
    event.reset();
    if (sender.notify_when_room(notifier) != leanchan::RoomStatus::kArmed) continue;
    event.wait();
  }
}
// The same with a notifier of its own.
template <class T, std::size_t B>
void send_with_notifier(Sender<T, B>& sender, T value) {
  Event event;
  Notifier notifier(&Event::fire, &event);
  send_with_notifier(sender, std::move(value), notifier, event);
}

// An executor whose thread sleeps on the explored futex, so the explorer
// sees it wait: schedule() queues and wakes; run_until(n) runs tasks until
// n have run. The queue's own mutex is never held across a scheduling point.
class ExploreExecutor final : public Executor {
 public:
  void schedule(ExecutorTask& task) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!task.queued) {
        task.queued = true;
        task.next = nullptr;
        (tail_ != nullptr ? tail_->next : head_) = &task;
        tail_ = &task;
      }
    }
    pending_.fetch_add(1);
    internal::futex_wake(pending_, INT_MAX);
  }
  void cancel(ExecutorTask& task) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!task.queued) return;
    ExecutorTask* previous = nullptr;
    for (ExecutorTask* node = head_; node != nullptr; previous = node, node = node->next) {
      if (node != &task) continue;
      (previous != nullptr ? previous->next : head_) = node->next;
      if (tail_ == node) tail_ = previous;
      break;
    }
    task.queued = false;
  }
  // Runs queued tasks, sleeping while none is queued, until `done()`.
  template <class Done>
  void run_until(Done done) {
    while (!done()) {
      const std::uint32_t seen = pending_.load();
      ExecutorTask* task = nullptr;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        task = head_;
        if (task != nullptr) {
          head_ = task->next;
          if (head_ == nullptr) tail_ = nullptr;
          task->queued = false;
        }
      }
      if (task != nullptr) {
        task->run(task);
      } else if (!done()) {
        internal::futex_wait(pending_, seen, nullptr);
      }
    }
  }
  // Wakes run_until to look at its condition again.
  void poke() {
    pending_.fetch_add(1);
    internal::futex_wake(pending_, INT_MAX);
  }

 private:
  std::mutex mutex_;
  ExecutorTask* head_ = nullptr;
  ExecutorTask* tail_ = nullptr;
  internal::Atomic<std::uint32_t> pending_{0};
};

// The options a scenario runs with: `bound` unless LEANCHAN_EXPLORE_BOUND
// overrides it (a deeper run on a big machine: scripts/explore_deep.sh),
// the default schedule budget unless LEANCHAN_EXPLORE_SCHEDULES raises it
// (a deeper bound needs more schedules), and LEANCHAN_EXPLORE_REPLAY to run
// one recorded schedule.
inline explore::Options options_from_env(int mutant, int bound) {
  explore::Options options;
  options.mutant = mutant;
  options.preemption_bound = bound;
  if (const char* deeper = std::getenv("LEANCHAN_EXPLORE_BOUND")) {
    options.preemption_bound = std::atoi(deeper);
  }
  if (const char* budget = std::getenv("LEANCHAN_EXPLORE_SCHEDULES")) {
    options.max_schedules = std::atol(budget);
  }
  if (const char* replay = std::getenv("LEANCHAN_EXPLORE_REPLAY")) options.replay = replay;
  return options;
}

// Explores `scenario` and reports: schedules, bound, time (printed for the
// record), and the failing trace if any.
inline explore::Result explore_with_env(const std::function<void()>& scenario, int mutant,
                                        int bound = 2) {
  return explore::explore(scenario, options_from_env(mutant, bound));
}

inline void run_scenario(const std::string& name, int bound,
                         const std::function<void()>& scenario) {
  const explore::Options options = options_from_env(0, bound);
  const explore::Result result = explore::explore(scenario, options);
  // The bound it ran under, which the environment may have raised.
  std::printf("[explore] %s (preemption bound %d): %s\n", name.c_str(), options.preemption_bound,
              result.summary().c_str());
  EXPECT_TRUE(result.ok) << result.summary();
  EXPECT_TRUE(result.complete) << result.summary();
}

}  // namespace leanchan::explore_test

#endif  // LEANCHAN_TESTS_EXPLORE_SCENARIO_SUPPORT_H_
