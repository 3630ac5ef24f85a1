// SPDX-License-Identifier: MIT
// The schedule explorer's scheduler (explorer.h for the
// driver, leanchan/internal/explore.h for the hooks). Compiled only into
// the explorer's test library.
//
// Threads of a scenario are real threads (workers, reused from one run to
// the next, so that a schedule does not pay for creating threads), but
// exactly one runs at a time:
// the one named by `current_`. At each scheduling point the running thread
// asks the scheduler who runs next; if that is another thread, it hands
// the turn over and waits for it to come back. Every decision with more
// than one candidate is recorded, so that a run can be replayed and the
// driver can enumerate alternatives depth-first. Each thread waits for its
// turn on a condition variable of its own, and a decision allocates
// nothing (ThreadIds), so that a schedule costs little more than its
// scheduling points, even under a sanitizer's allocator.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "explorer.h"
#include "leanchan/internal/explore.h"

namespace leanchan::explore {
namespace {

enum class ThreadState { kRunnable, kBlocked, kFinished };

// At most this many threads per scenario (spawn fails the run beyond it).
constexpr int kMaxThreads = 16;

// Thread ids in a fixed array: a decision is made at every scheduling
// point, so its lists must not allocate.
class ThreadIds {
 public:
  void push_back(int id) { ids_[size_++] = id; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int front() const { return ids_[0]; }
  int operator[](std::size_t i) const { return ids_[i]; }
  const int* begin() const { return ids_.data(); }
  const int* end() const { return ids_.data() + size_; }

 private:
  std::array<int, kMaxThreads> ids_{};
  std::size_t size_ = 0;
};

struct Slot {
  int id = 0;
  long generation = 0;  // the run it belongs to
  ThreadState state = ThreadState::kRunnable;
  const void* blocked_on = nullptr;  // a futex word, or &join_marker
  bool timed = false;
  bool timed_out = false;
  std::function<void()> body;
  std::condition_variable turn;  // notified when `current_` becomes this id
};

// A thread that runs one Slot after another. Never destroyed: a worker of
// a stuck run stays parked for good, and idle ones wait until the process
// exits.
struct Worker {
  std::condition_variable wake;  // notified when `slot` is given
  Slot* slot = nullptr;
  std::thread thread;
};

struct Decision {
  ThreadIds candidates;  // thread ids; [0] is the default
  std::size_t chosen = 0;
  int preemptions_before = 0;
  int current = 0;  // the thread that was running (a switch away from it
                    // while it could go on is a preemption)
  bool current_enabled = false;
};

constexpr char kJoinMarker = 0;

class Scheduler {
 public:
  // ---- driver side -----------------------------------------------------------
  void begin(std::vector<std::size_t> prefix, long step_limit, int mutant) {
    std::lock_guard<std::mutex> lock(mutex_);
    prefix_ = std::move(prefix);
    decisions_.clear();
    preemptions_ = 0;
    steps_ = 0;
    step_limit_ = step_limit;
    mutant_ = mutant;
    failure_.clear();
    stuck_ = false;
    slots_.clear();
    current_ = 0;
    ++generation_;
  }

  // Runs `scenario` as thread 0 and returns when every thread has finished
  // or the run is stuck (deadlock or livelock; its threads are then parked
  // forever, and so is the scenario's state: a test process that found a
  // bug only reports it).
  bool run(const std::function<void()>& scenario) {
    auto slot = std::make_unique<Slot>();
    slot->id = 0;
    slot->generation = generation_;
    slot->body = scenario;
    std::unique_lock<std::mutex> lock(mutex_);
    Slot* main = slot.get();
    slots_.push_back(std::move(slot));
    start_locked(main);
    done_.wait(lock, [this] { return all_finished_locked() || stuck_; });
    const bool finished = !stuck_;
    // A finished run's workers are idle again (each finished its slot in
    // the critical section that counted it finished); a stuck run's are
    // parked with their slots.
    if (!finished) parked_.push_back(std::move(slots_));
    slots_.clear();
    return finished;
  }

  const std::vector<Decision>& decisions() const { return decisions_; }
  const std::string& failure() const { return failure_; }
  long steps() const { return steps_; }

  // ---- scenario side ----------------------------------------------------------
  void spawn(std::function<void()> body) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (slots_.size() >= static_cast<std::size_t>(kMaxThreads)) {
      mark_stuck_locked("a scenario spawned more than " + std::to_string(kMaxThreads - 1) +
                        " threads");
      park_locked(lock);
    }
    auto slot = std::make_unique<Slot>();
    slot->id = static_cast<int>(slots_.size());
    slot->generation = generation_;
    slot->body = std::move(body);
    Slot* raw = slot.get();
    slots_.push_back(std::move(slot));
    start_locked(raw);
    lock.unlock();
    point(false);  // the new thread may run first
  }

  void join_all() {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot* me = slots_[static_cast<std::size_t>(current_)].get();
    while (!others_finished_locked(me)) {
      me->state = ThreadState::kBlocked;
      me->blocked_on = &kJoinMarker;
      switch_away_locked(lock, me);
    }
  }

  void fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = message;
  }

  void point(bool yielding, bool pausing = false) {
    if (tls_slot == nullptr) return;
    std::unique_lock<std::mutex> lock(mutex_);
    Slot* me = tls_slot;
    if (++steps_ > step_limit_) {
      mark_stuck_locked("livelock: more than " + std::to_string(step_limit_) +
                        " scheduling points in one run");
      park_locked(lock);
    }
    ThreadIds enabled = enabled_locked();
    if (pausing) {
      // A bounded spin-wait is an ordinary point: the spinner may be
      // preempted there like anywhere else. (A free switch at every pause
      // would multiply the schedules by two per pause, for schedules that
      // only differ in how often a value was re-read.)
      decide_locked(lock, me, enabled, /*me_enabled=*/true);
      return;
    }
    if (yielding) {
      // A spin-wait gives the turn to the next runnable thread (round
      // robin), without a decision: spinning only re-reads.
      int next = me->id;
      for (int id : enabled) {
        if (id > me->id) {
          next = id;
          break;
        }
      }
      if (next == me->id && !enabled.empty() && enabled.front() != me->id) next = enabled.front();
      if (next != me->id) hand_over_locked(lock, me, next);
      return;
    }
    decide_locked(lock, me, enabled, /*me_enabled=*/true);
  }

  bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, bool timed) {
    if (tls_slot == nullptr) return true;
    point(false);
    std::unique_lock<std::mutex> lock(mutex_);
    Slot* me = tls_slot;
    if (word.load(std::memory_order_relaxed) != expected) return true;
    me->state = ThreadState::kBlocked;
    me->blocked_on = &word;
    me->timed = timed;
    me->timed_out = false;
    switch_away_locked(lock, me);
    return !me->timed_out;
  }

  void futex_wake(std::atomic<std::uint32_t>& word, int count) {
    if (tls_slot == nullptr) return;
    point(false);
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& s : slots_) {
      if (count <= 0) break;
      if (s->state == ThreadState::kBlocked && s->blocked_on == &word) {
        s->state = ThreadState::kRunnable;
        s->blocked_on = nullptr;
        --count;
      }
    }
  }

  int mutant() const { return mutant_; }

 private:
  static thread_local Slot* tls_slot;

  // Gives `slot` to an idle worker, or to a new one.
  void start_locked(Slot* slot) {
    if (idle_.empty()) {
      auto* worker = new Worker();
      worker->slot = slot;
      worker->thread = std::thread([this, worker] { worker_main(worker); });
      return;
    }
    Worker* worker = idle_.back();
    idle_.pop_back();
    worker->slot = slot;
    worker->wake.notify_one();
  }

  void worker_main(Worker* worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      worker->wake.wait(lock, [&] { return worker->slot != nullptr; });
      run_slot_locked(lock, worker->slot);
      worker->slot = nullptr;
      idle_.push_back(worker);
    }
  }

  // Runs one scenario thread: waits for its turn, runs its body, and ends
  // it (in one critical section with the return to the idle list).
  void run_slot_locked(std::unique_lock<std::mutex>& lock, Slot* me) {
    me->turn.wait(lock, [&] { return my_turn_locked(me); });
    lock.unlock();
    tls_slot = me;
    me->body();
    lock.lock();
    tls_slot = nullptr;
    me->state = ThreadState::kFinished;
    // A joiner waiting for everyone may run again.
    for (auto& s : slots_) {
      if (s->state == ThreadState::kBlocked && s->blocked_on == &kJoinMarker &&
          others_finished_locked(s.get())) {
        s->state = ThreadState::kRunnable;
        s->blocked_on = nullptr;
      }
    }
    if (all_finished_locked()) {
      done_.notify_all();
      return;
    }
    ThreadIds enabled = enabled_locked();
    if (enabled.empty()) {
      if (!wake_a_timed_waiter_locked(enabled)) {
        mark_stuck_locked("deadlock: every thread is blocked" + blocked_list_locked());
        return;
      }
    }
    choose_and_go_locked(me, enabled, /*me_enabled=*/false);
  }

  // The running thread `me` has blocked: pick the next thread (not a
  // preemption), let a timed wait expire if nothing else can run, or
  // report a deadlock.
  void switch_away_locked(std::unique_lock<std::mutex>& lock, Slot* me) {
    ThreadIds enabled = enabled_locked();
    if (enabled.empty() && !wake_a_timed_waiter_locked(enabled)) {
      mark_stuck_locked("deadlock: every thread is blocked" + blocked_list_locked());
      park_locked(lock);
    }
    choose_and_go_locked(me, enabled, /*me_enabled=*/false);
    me->turn.wait(lock, [&] { return my_turn_locked(me); });
  }

  void decide_locked(std::unique_lock<std::mutex>& lock, Slot* me, const ThreadIds& enabled,
                     bool me_enabled) {
    const int next = choose_locked(me, enabled, me_enabled);
    if (next != me->id) hand_over_locked(lock, me, next);
  }

  void choose_and_go_locked(Slot* me, const ThreadIds& enabled, bool me_enabled) {
    give_turn_locked(choose_locked(me, enabled, me_enabled));
  }

  void give_turn_locked(int next) {
    current_ = next;
    slots_[static_cast<std::size_t>(next)]->turn.notify_one();
  }

  // The decision: candidates with the default first (the running thread if
  // it can go on, else the lowest id). Taken from the prefix if it reaches
  // this far, else the default. Only real alternatives are recorded.
  int choose_locked(Slot* me, const ThreadIds& enabled, bool me_enabled) {
    ThreadIds candidates;
    if (me_enabled) candidates.push_back(me->id);
    for (int id : enabled) {
      if (id != me->id || !me_enabled) candidates.push_back(id);
    }
    if (candidates.size() == 1) return candidates.front();
    Decision decision;
    decision.candidates = candidates;
    decision.preemptions_before = preemptions_;
    decision.current = me->id;
    decision.current_enabled = me_enabled;
    const std::size_t index = decisions_.size();
    decision.chosen = index < prefix_.size() ? prefix_[index] : 0;
    if (decision.chosen >= candidates.size()) decision.chosen = 0;  // a replay that diverged
    if (me_enabled && decision.chosen != 0) ++preemptions_;
    decisions_.push_back(decision);
    return candidates[decision.chosen];
  }

  void hand_over_locked(std::unique_lock<std::mutex>& lock, Slot* me, int next) {
    give_turn_locked(next);
    me->turn.wait(lock, [&] { return my_turn_locked(me); });
  }

  // A thread of an abandoned (stuck) run never gets a turn again.
  bool my_turn_locked(const Slot* me) const {
    return me->generation == generation_ && current_ == me->id;
  }

  bool wake_a_timed_waiter_locked(ThreadIds& enabled) {
    for (auto& s : slots_) {
      if (s->state == ThreadState::kBlocked && s->timed) {
        s->state = ThreadState::kRunnable;
        s->blocked_on = nullptr;
        s->timed_out = true;
        enabled.push_back(s->id);
        return true;
      }
    }
    return false;
  }

  void mark_stuck_locked(const std::string& why) {
    if (failure_.empty()) failure_ = why;
    stuck_ = true;
    done_.notify_all();
  }

  [[noreturn]] void park_locked(std::unique_lock<std::mutex>& lock) {
    tls_slot = nullptr;
    std::condition_variable never;
    for (;;) never.wait(lock);  // parked for good: the run is abandoned
  }

  std::string blocked_list_locked() const {
    std::ostringstream out;
    for (const auto& s : slots_) {
      if (s->state == ThreadState::kBlocked) out << " [thread " << s->id << " waits]";
    }
    return out.str();
  }

  ThreadIds enabled_locked() const {
    ThreadIds ids;
    for (const auto& s : slots_) {
      if (s->state == ThreadState::kRunnable) ids.push_back(s->id);
    }
    return ids;
  }
  bool all_finished_locked() const {
    return std::all_of(slots_.begin(), slots_.end(),
                       [](const auto& s) { return s->state == ThreadState::kFinished; });
  }
  bool others_finished_locked(const Slot* me) const {
    return std::all_of(slots_.begin(), slots_.end(), [me](const auto& s) {
      return s.get() == me || s->state == ThreadState::kFinished;
    });
  }

  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::vector<std::unique_ptr<Slot>>> parked_;
  std::vector<Worker*> idle_;
  int current_ = 0;
  long generation_ = 0;
  std::vector<std::size_t> prefix_;
  std::vector<Decision> decisions_;
  int preemptions_ = 0;
  long steps_ = 0;
  long step_limit_ = 200000;
  int mutant_ = 0;
  std::string failure_;
  bool stuck_ = false;
};

thread_local Slot* Scheduler::tls_slot = nullptr;

Scheduler& scheduler() {
  static auto* instance = new Scheduler();  // never destroyed: parked threads use it
  return *instance;
}

std::string trace_of(const std::vector<Decision>& decisions) {
  std::ostringstream out;
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    if (i != 0) out << ',';
    out << decisions[i].chosen;
  }
  return out.str();
}

std::vector<std::size_t> parse_trace(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(static_cast<std::size_t>(std::stoul(item)));
  }
  return out;
}

}  // namespace

void spawn(std::function<void()> body) {
  scheduler().spawn(std::move(body));
}
void join_all() {
  scheduler().join_all();
}
void check(bool condition, const std::string& message) {
  if (!condition) scheduler().fail(message);
}

Result explore(const std::function<void()>& scenario, const Options& options) {
  Result result;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::size_t> prefix =
      options.replay.empty() ? std::vector<std::size_t>{} : parse_trace(options.replay);
  Scheduler& sched = scheduler();
  for (;;) {
    sched.begin(prefix, options.step_limit, options.mutant);
    const bool finished = sched.run(scenario);
    ++result.schedules;
    const auto& decisions = sched.decisions();
    result.max_decisions = std::max(result.max_decisions, decisions.size());
    if (!sched.failure().empty() || !finished) {
      result.ok = false;
      result.failure = sched.failure();
      result.trace = trace_of(decisions);
      break;
    }
    if (!options.replay.empty()) break;  // a replay runs once
    if (result.schedules >= options.max_schedules) {
      result.complete = false;
      break;
    }
    // Depth-first: the deepest decision with an untried alternative within
    // the preemption bound.
    bool more = false;
    for (std::size_t i = decisions.size(); i-- > 0;) {
      const Decision& d = decisions[i];
      for (std::size_t alt = d.chosen + 1; alt < d.candidates.size(); ++alt) {
        const int cost = d.current_enabled && alt != 0 ? 1 : 0;
        if (d.preemptions_before + cost > options.preemption_bound) continue;
        prefix.assign(decisions.size() > i ? i : 0, 0);
        for (std::size_t k = 0; k < i; ++k) prefix[k] = decisions[k].chosen;
        prefix.push_back(alt);
        more = true;
        break;
      }
      if (more) break;
    }
    if (!more) break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string Result::summary() const {
  std::ostringstream out;
  out << schedules << " schedules ("
      << (!ok        ? "stopped at the first failure"
          : complete ? "all"
                     : "budget reached")
      << "), longest " << max_decisions << " decisions, " << seconds << " s";
  if (!ok) out << "\nFAILED: " << failure << "\nreplay trace: " << trace;
  return out.str();
}

}  // namespace leanchan::explore

namespace leanchan::internal::explore {

void point() noexcept {
  leanchan::explore::scheduler().point(false);
}
void pause() noexcept {
  leanchan::explore::scheduler().point(false, true);
}
void yield() noexcept {
  leanchan::explore::scheduler().point(true);
}
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, bool timed) noexcept {
  return leanchan::explore::scheduler().futex_wait(word, expected, timed);
}
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  leanchan::explore::scheduler().futex_wake(word, count);
}
int mutant() noexcept {
  return leanchan::explore::scheduler().mutant();
}
void report_violation(const char* what) noexcept {
  leanchan::explore::scheduler().fail(what);
}

}  // namespace leanchan::internal::explore
