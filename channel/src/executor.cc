// SPDX-License-Identifier: MIT
#include "leanchan/executor.h"

#include <atomic>
#include <cassert>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>

#include "leanchan/internal/atomic.h"
#include "leanchan/internal/contract.h"
#include "leanchan/internal/futex.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan {

ManualExecutor::~ManualExecutor() {
  // A task left marked queued would ignore every later schedule(), on any
  // executor.
  std::lock_guard<std::mutex> lock(mutex_);
  while (pop_locked() != nullptr) {
  }
}

void ManualExecutor::schedule(ExecutorTask& task) noexcept {
  // The notify is made under the lock: once the lock is released, the
  // running thread may take the task, finish, and destroy the executor
  // (the task may be the last thing it waited for), so nothing here may
  // touch the executor after the unlock.
  std::lock_guard<std::mutex> lock(mutex_);
  if (task.queued) return;  // already queued: one run covers both requests
  task.queued = true;
  task.next = nullptr;
  if (tail_ != nullptr)
    tail_->next = &task;
  else
    head_ = &task;
  tail_ = &task;
  wake_.notify_one();
}

void ManualExecutor::cancel(ExecutorTask& task) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!task.queued) return;
  ExecutorTask* previous = nullptr;
  for (ExecutorTask* node = head_; node != nullptr; previous = node, node = node->next) {
    if (node != &task) continue;
    if (previous != nullptr)
      previous->next = node->next;
    else
      head_ = node->next;
    if (tail_ == node) tail_ = previous;
    break;
  }
  task.queued = false;
  task.next = nullptr;
}

ExecutorTask* ManualExecutor::pop_locked() noexcept {
  ExecutorTask* task = head_;
  if (task == nullptr) return nullptr;
  head_ = task->next;
  if (head_ == nullptr) tail_ = nullptr;
  task->queued = false;
  task->next = nullptr;
  return task;
}

std::size_t ManualExecutor::run_pending() {
  std::size_t count = 0;
  for (;;) {
    ExecutorTask* task = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task = pop_locked();
    }
    if (task == nullptr) return count;
    task->run(task);
    ++count;
  }
}

void ManualExecutor::run() {
  for (;;) {
    ExecutorTask* task = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopped_ || head_ != nullptr; });
      if (stopped_) {
        stopped_ = false;
        return;
      }
      task = pop_locked();
    }
    task->run(task);
  }
}

void ManualExecutor::stop() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);  // notify under it, as schedule()
  stopped_ = true;
  wake_.notify_all();
}

// ---- ThreadPoolExecutor ----------------------------------------------------
//
// Where a task of this pool is, under State::mutex:
//   - idle: queued false; `next` is stale (nullptr, or the tag of the worker
//     that last ran it, whose `running` is no longer it);
//   - in one of the two queues (`arrived`, `displaced`): queued true, `next`
//     the link;
//   - in worker W's next slot: queued true, W.slot == task, `next` W's tag;
//   - running on W: W.running == task, `next` W's tag; queued false, or true
//     with W.rerun (scheduled again while it runs: W, and no other thread,
//     pushes it onto `arrived` when the run returns).
// A queued task is alive (its owner cancels it before it goes away), so
// the pool touches a task only while it is queued or while it runs; after
// a run returns the worker compares pointers only, unless W.rerun says the
// task is queued. `queued` is the task's own field, accessed through
// atomic_ref so that cancel() may read it without the lock.
//
// The two queues differ only in who is woken for them: a task that arrives
// from outside the pool wakes a sleeper; a task displaced from a worker's
// slot wakes nobody, because the worker that displaced it is awake and
// takes it soon, unless more than kQuietBacklog of them wait. A rerun goes
// to `arrived` but wakes nobody when it is pushed: its worker is awake and
// takes it next unless its slot or the displaced queue comes first; a
// worker that takes a task while one in `arrived` waits wakes a sleeper
// then (backlog_locked), as it does for a task from outside.

namespace {

// Tags a worker's address into a task's `next` (workers are aligned, links
// to tasks never carry the bit).
constexpr std::uintptr_t kWorkerTag = 1;
// Runs in a row from a worker's next slot, while a queue has tasks waiting,
// after which the worker serves the queues first.
constexpr int kSlotStreak = 16;

std::atomic_ref<bool> queued_flag(ExecutorTask& task) noexcept {
  return std::atomic_ref<bool>(task.queued);
}

// An intrusive FIFO of tasks linked through `next`, under the pool's lock.
struct TaskQueue {
  ExecutorTask* head = nullptr;
  ExecutorTask* tail = nullptr;
  std::size_t length = 0;

  bool empty() const noexcept { return head == nullptr; }
  void push(ExecutorTask& task) noexcept {
    task.next = nullptr;
    if (tail != nullptr)
      tail->next = &task;
    else
      head = &task;
    tail = &task;
    ++length;
  }
  ExecutorTask* pop() noexcept {
    ExecutorTask* task = head;
    if (task == nullptr) return nullptr;
    head = task->next;
    if (head == nullptr) tail = nullptr;
    --length;
    return task;
  }
  // True if `task` was here (and is now out, its link cleared).
  bool unlink(ExecutorTask& task) noexcept {
    ExecutorTask* previous = nullptr;
    for (ExecutorTask* node = head; node != nullptr; previous = node, node = node->next) {
      if (node != &task) continue;
      if (previous != nullptr)
        previous->next = node->next;
      else
        head = node->next;
      if (tail == node) tail = previous;
      --length;
      task.next = nullptr;
      return true;
    }
    return false;
  }
};

}  // namespace

struct ThreadPoolExecutor::Worker {
  State* pool = nullptr;
  ExecutorTask* running = nullptr;  // the task this worker runs now
  ExecutorTask* slot = nullptr;     // the next slot: runs when `running` returns
  bool rerun = false;               // `running` was scheduled again while it ran
  bool displaced_first = false;     // which queue this worker serves next when both wait
  int streak = 0;                   // slot runs in a row while a queue waited
  std::thread thread;
};

struct ThreadPoolExecutor::State {
  explicit State(std::size_t threads) : workers(new Worker[threads]), count(threads) {
    for (std::size_t i = 0; i < count; ++i) workers[i].pool = this;
  }

  ExecutorTask* tag_of(Worker& worker) noexcept {
    return reinterpret_cast<ExecutorTask*>(reinterpret_cast<std::uintptr_t>(&worker) | kWorkerTag);
  }
  // The worker of this pool whose tag `task.next` holds, if any (a stale
  // tag, or one of another pool, gives a worker that is not running it).
  Worker* tagged_worker(const ExecutorTask& task) noexcept {
    const auto bits = reinterpret_cast<std::uintptr_t>(task.next);
    if ((bits & kWorkerTag) == 0) return nullptr;
    const auto first = reinterpret_cast<std::uintptr_t>(workers.get());
    const std::uintptr_t at = bits & ~kWorkerTag;
    if (at < first || at >= first + count * sizeof(Worker)) return nullptr;
    if ((at - first) % sizeof(Worker) != 0) return nullptr;
    return &workers[(at - first) / sizeof(Worker)];
  }

  // The queued tasks, for watching workers: relaxed, a hint (they take the
  // lock before they touch a queue); written under the lock.
  void publish_size_locked() noexcept {
    size.store(arrived.length + displaced.length, std::memory_order_relaxed);
  }
  bool queues_empty_locked() const noexcept { return arrived.empty() && displaced.empty(); }
  // Whether a worker that takes a task owes a wake-up to the tasks still
  // queued: one that arrived waits, or more displaced ones than
  // kQuietBacklog.
  bool backlog_locked() const noexcept {
    return !arrived.empty() || displaced.length > kQuietBacklog;
  }

  // After a task was queued: true if the caller must wake a sleeper (after
  // unlocking). None while a worker watches (it will take the task) or a
  // wake-up is already on its way for every sleeper that could come.
  bool wake_needed_locked() noexcept {
    if (searching != 0 || sleeping <= waking) return false;
    ++waking;
    ++wake_ups;
    // relaxed: no C++ ordering keeps a sleeper from sleeping through this
    // (its futex_wait runs after its unlock, so its read of the word is not
    // ordered after this RMW); the futex is what does. The sleeper read the
    // word under the lock, before this; the kernel compares the word with
    // that value and queues the sleeper atomically with respect to
    // futex_wake on the same word; and this RMW is sequenced before the
    // caller's futex_wake (wake_one). So either the compare sees the new
    // value and the sleeper returns at once, or it is queued and the wake
    // finds it.
    wake_word.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void wake_one() noexcept { internal::futex_wake(wake_word, 1); }

  // The next task for `worker`: its slot first (unless it has served the
  // slot kSlotStreak times in a row while a queue waited), then the
  // queues, taking turns when both hold tasks.
  ExecutorTask* take_locked(Worker& worker) noexcept {
    const bool others = !queues_empty_locked();
    if (worker.slot != nullptr && (worker.streak < kSlotStreak || !others)) {
      ExecutorTask* task = std::exchange(worker.slot, nullptr);
      worker.streak = others ? worker.streak + 1 : 0;
      return task;
    }
    const bool from_displaced = arrived.empty() || (!displaced.empty() && worker.displaced_first);
    ExecutorTask* task = from_displaced ? displaced.pop() : arrived.pop();
    if (task == nullptr) return nullptr;
    worker.displaced_first = !from_displaced;
    worker.streak = 0;
    task->next = tag_of(worker);
    publish_size_locked();
    return task;
  }

  // Sleeps until woken: the sleep step of the worker's spin_then_sleep.
  // The worker stops counting as searching while it sleeps, and counts
  // again (it looks at the queues) once it is up.
  internal::Slept sleep() noexcept {
    std::uint32_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!queues_empty_locked() || stopped) return internal::Slept::kLookAgain;
      --searching;
      ++sleeping;
      seen = wake_word.load(std::memory_order_relaxed);  // under the lock: see wake_needed_locked
    }
    internal::futex_wait(wake_word, seen, nullptr);
    {
      std::lock_guard<std::mutex> lock(mutex);
      --sleeping;
      // Whoever comes back consumes one wake-up on its way (a spurious
      // return may take another's: then one more worker wakes than needed,
      // and none is ever missing: everyone who returns looks at the queues).
      if (waking > 0) --waking;
      ++searching;
    }
    return internal::Slept::kLookAgain;
  }

  void work(Worker& worker) noexcept {
    current = &worker;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (stopped) return;
      ExecutorTask* task = take_locked(worker);
      if (task == nullptr) {
        ++searching;
        lock.unlock();
        internal::spin_then_sleep(
            internal::kWaitPolicy.pool_worker,
            [this] {
              // relaxed: hints; the worker takes the lock before it acts.
              return size.load(std::memory_order_relaxed) != 0 ||
                     stop_requested.load(std::memory_order_relaxed);
            },
            [this] { return sleep(); });
        lock.lock();
        --searching;
        continue;
      }
      // More waiting than this worker takes: the next worker goes too.
      const bool wake = backlog_locked() && wake_needed_locked();
      queued_flag(*task).store(false, std::memory_order_relaxed);  // under the lock
      worker.running = task;
      lock.unlock();
      if (wake) wake_one();
      task->run(task);
      lock.lock();
      worker.running = nullptr;
      if (worker.rerun) {  // queued again while it ran: alive, still queued
        worker.rerun = false;
        arrived.push(*task);  // this worker takes it itself if nothing is ahead
        publish_size_locked();
      }
    }
  }

  std::mutex mutex;
  TaskQueue arrived;                 // scheduled from outside the pool, or a rerun
  TaskQueue displaced;               // pushed out of a worker's slot by a newer task
  std::atomic<std::size_t> size{0};  // of both queues: publish_size_locked
  std::unique_ptr<Worker[]> workers;
  std::size_t count;
  int searching = 0;           // workers awake and looking for a task, not running one
  int sleeping = 0;            // workers registered asleep on wake_word
  int waking = 0;              // wake-ups issued and not yet consumed by a returning sleeper
  std::uint64_t wake_ups = 0;  // wake-ups issued since the start: wake_ups()
  bool stopped = false;
  std::atomic<bool> stop_requested{false};  // `stopped`, for watching workers
  internal::Atomic<std::uint32_t> wake_word{0};

  static thread_local Worker* current;  // the worker whose thread this is
};

thread_local ThreadPoolExecutor::Worker* ThreadPoolExecutor::State::current = nullptr;

ThreadPoolExecutor::ThreadPoolExecutor(std::size_t threads) {
  static_assert(alignof(Worker) > kWorkerTag, "the worker tag needs a free low bit");
  if (threads == 0)
    throw std::invalid_argument("leanchan::ThreadPoolExecutor needs 1 thread or more");
  state_ = std::make_unique<State>(threads);
  worker_count_ = threads;
  try {
    for (std::size_t i = 0; i < threads; ++i) {
      Worker& worker = state_->workers[i];
      worker.thread = std::thread([this, &worker] { state_->work(worker); });
    }
  } catch (...) {
    stop();
    for (std::size_t i = 0; i < threads; ++i) {
      if (state_->workers[i].thread.joinable()) state_->workers[i].thread.join();
    }
    throw;
  }
}

void ThreadPoolExecutor::join() {
  // From a worker it would join its own thread, or wait for peers waiting
  // for it: the contract forbids it, and every build says so here (a
  // thread-local load, once per join).
  if (State::current != nullptr && State::current->pool == state_.get()) [[unlikely]] {
    internal::contract_violation(
        "ThreadPoolExecutor::join or its destructor on one of its own workers");
  }
  stop();
  LEANCHAN_TEST_POINT(kPoolJoining);
  for (std::size_t i = 0; i < worker_count_; ++i) {
    if (state_->workers[i].thread.joinable()) state_->workers[i].thread.join();
  }
}

ThreadPoolExecutor::~ThreadPoolExecutor() {
  join();
  // Every worker is gone: discard what is still queued.
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (TaskQueue* queue : {&state_->arrived, &state_->displaced}) {
    while (ExecutorTask* task = queue->pop()) {
      task->next = nullptr;
      queued_flag(*task).store(false, std::memory_order_relaxed);  // under the lock
    }
  }
  state_->publish_size_locked();
  for (std::size_t i = 0; i < worker_count_; ++i) {
    if (ExecutorTask* task = std::exchange(state_->workers[i].slot, nullptr)) {
      task->next = nullptr;
      queued_flag(*task).store(false, std::memory_order_relaxed);  // under the lock
    }
  }
}

void ThreadPoolExecutor::schedule(ExecutorTask& task) noexcept {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    // Already queued: one run covers both requests. Decided under the lock,
    // so the run that covers it starts after this request (the worker takes
    // the task under the same lock).
    if (queued_flag(task).load(std::memory_order_relaxed)) return;
    queued_flag(task).store(true, std::memory_order_relaxed);  // under the lock
    if (Worker* owner = s.tagged_worker(task); owner != nullptr && owner->running == &task) {
      // Running now: its worker queues it again when the run returns, so
      // it never runs on two threads at once.
      owner->rerun = true;
      return;
    }
    Worker* self = State::current;
    if (self != nullptr && self->pool == &s && !s.stopped) {
      // On one of this pool's workers, inside a run: the task runs next on
      // this thread, with no wake-up; one already in the slot moves to the FIFO.
      ExecutorTask* displaced = std::exchange(self->slot, &task);
      task.next = s.tag_of(*self);
      if (displaced == nullptr) return;
      s.displaced.push(*displaced);
      s.publish_size_locked();
      // This worker is awake and takes it after its slot (or a watching
      // worker takes it first): a wake-up only for a backlog beyond that.
      if (s.displaced.length <= kQuietBacklog) return;
    } else {
      s.arrived.push(task);
      s.publish_size_locked();
    }
    // Woken under the lock, on the path that wakes a sleeper: after the
    // unlock the task may run, and what waited for it destroy the pool,
    // before a wake made then would touch its word.
    if (s.wake_needed_locked()) s.wake_one();
  }
}

void ThreadPoolExecutor::cancel(ExecutorTask& task) noexcept {
  // relaxed: false means nothing is queued that this call must withdraw: a
  // schedule() the caller ordered before this call wrote true first (and
  // coherence shows it, or a worker's later false: then it has been taken,
  // and a run in progress is not waited for); one racing with it may be
  // ordered after it.
  if (!queued_flag(task).load(std::memory_order_relaxed)) return;
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!queued_flag(task).load(std::memory_order_relaxed)) return;
  queued_flag(task).store(false, std::memory_order_relaxed);  // under the lock
  if (Worker* owner = s.tagged_worker(task); owner != nullptr) {
    if (owner->slot == &task) {
      owner->slot = nullptr;
      task.next = nullptr;
      return;
    }
    if (owner->running == &task) {  // scheduled again while it runs (maybe this very run)
      owner->rerun = false;
      return;
    }
  }
  if (!s.arrived.unlink(task)) s.displaced.unlink(task);
  s.publish_size_locked();
}

std::size_t ThreadPoolExecutor::sleeping_workers() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<std::size_t>(state_->sleeping);
}

std::uint64_t ThreadPoolExecutor::wake_ups() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->wake_ups;
}

void ThreadPoolExecutor::stop() noexcept {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.stopped) return;
    s.stopped = true;
    s.stop_requested.store(true, std::memory_order_relaxed);  // a hint, as `size`
    s.wake_word.fetch_add(1, std::memory_order_relaxed);      // as in wake_needed_locked
  }
  internal::futex_wake(s.wake_word, INT_MAX);
}

}  // namespace leanchan
