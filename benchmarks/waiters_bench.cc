// SPDX-License-Identifier: MIT
// The waiter queue's cost with many waiters (docs/design.md "The waiter
// queue"): arming and cancelling one send notifier, and a receive that
// hands its slot to the first waiter, with 0 .. 16,384 other notifiers
// already armed on the same full channel. Both must stay flat: append and
// removal are O(1), and the hand-off looks only at the head.
//
//   waiters/arm_cancel/armed:N    one notify_when_room + cancel_notify
//   waiters/handoff/armed:N       one try_recv handing its slot to a waiter,
//                                 the waiter's redeeming try_send, re-arming
#include <benchmark/benchmark.h>

#include <cstdint>
#include <deque>

#include "leanchan/channel.h"

namespace {

void ignore(void*) {}

struct Armed {
  explicit Armed(std::int64_t count) {
    for (int i = 0; i < 4; ++i) (void)tx.try_send(i);  // full
    for (std::int64_t i = 0; i < count; ++i) {
      leanchan::Notifier& n = notifiers.emplace_back(&ignore, nullptr);
      if (tx.notify_when_room(n) != leanchan::RoomStatus::kArmed) std::abort();
    }
  }
  ~Armed() {
    rx.close();  // fires (and so releases) every armed notifier
  }
  std::pair<leanchan::Sender<int, 4>, leanchan::Receiver<int, 4>> channel =
      leanchan::channel<int, 4>(4);
  leanchan::Sender<int, 4>& tx = channel.first;
  leanchan::Receiver<int, 4>& rx = channel.second;
  std::deque<leanchan::Notifier> notifiers;
};

void arm_cancel(benchmark::State& state) {
  Armed armed(state.range(0));
  leanchan::Notifier mine(&ignore, nullptr);
  for (auto _ : state) {
    if (armed.tx.notify_when_room(mine) != leanchan::RoomStatus::kArmed)
      state.SkipWithError("room appeared");
    benchmark::DoNotOptimize(armed.tx.cancel_notify(mine));
  }
}

void handoff(benchmark::State& state) {
  // One notifier at the head of a queue of `armed` others: each round the
  // receiver frees a slot (handed to the head), the head redeems it with a
  // send and queues again at the back; the next head follows.
  Armed armed(state.range(0));
  leanchan::Notifier extra(&ignore, nullptr);
  if (armed.tx.notify_when_room(extra) != leanchan::RoomStatus::kArmed) std::abort();
  std::size_t next = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(armed.rx.try_recv());
    leanchan::Notifier& head = next < armed.notifiers.size() ? armed.notifiers[next] : extra;
    if (!armed.tx.try_send(1, head).ok()) state.SkipWithError("no slot handed over");
    if (armed.tx.notify_when_room(head) != leanchan::RoomStatus::kArmed)
      state.SkipWithError("room appeared");
    next = next + 1 <= armed.notifiers.size() ? next + 1 : 0;
  }
}

BENCHMARK(arm_cancel)->Name("waiters/arm_cancel")->ArgName("armed")->Arg(0)->Arg(1024)->Arg(16384);
BENCHMARK(handoff)->Name("waiters/handoff")->ArgName("armed")->Arg(0)->Arg(1024)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
