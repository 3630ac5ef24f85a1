// SPDX-License-Identifier: MIT
#include "leanchan/executor.h"

namespace leanchan {

void ManualExecutor::schedule(ExecutorTask& task) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (task.queued) return;  // already queued: one run covers both requests
    task.queued = true;
    task.next = nullptr;
    if (tail_ != nullptr)
      tail_->next = &task;
    else
      head_ = &task;
    tail_ = &task;
  }
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
}

}  // namespace leanchan
