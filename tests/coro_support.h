// SPDX-License-Identifier: MIT
// Coroutine types shared by the tests: Task keeps its frame until it is
// destroyed; Detached frees its own frame when it finishes.
#ifndef LEANCHAN_TESTS_CORO_SUPPORT_H_
#define LEANCHAN_TESTS_CORO_SUPPORT_H_

#include <coroutine>
#include <exception>
#include <utility>

namespace leanchan::testing {

// Starts suspended; keeps its frame after finishing until the Task goes.
struct Task {
  struct promise_type {
    Task get_return_object() {
      return Task{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
  explicit Task(std::coroutine_handle<promise_type> h) : handle(h) {}
  Task(Task&& other) noexcept : handle(std::exchange(other.handle, nullptr)) {}
  ~Task() {
    if (handle) handle.destroy();
  }
  bool done() const { return handle.done(); }
  std::coroutine_handle<promise_type> handle;
};

// Starts suspended; frees its own frame when it finishes (final_suspend
// never suspends), on whichever thread resumed it last.
struct Detached {
  struct promise_type {
    Detached get_return_object() {
      return Detached{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
  std::coroutine_handle<promise_type> handle;
};

}  // namespace leanchan::testing

#endif  // LEANCHAN_TESTS_CORO_SUPPORT_H_
