// SPDX-License-Identifier: MIT
// Stress: mixed waiters (threads, timed senders, reserve_many, notifiers,
// closed watchers) on a small channel; checks per-sender FIFO, no lost
// wake-up (bounded run time), and that every slot comes back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

using namespace std::chrono_literals;

namespace {

struct Msg {
  int sender;
  int seq;
};

struct Flag {
  std::atomic<int> fired{0};
  static void cb(void* self) { static_cast<Flag*>(self)->fired.fetch_add(1); }
};

void run_mix(std::size_t cap, int n_threads, int iters, bool close_midway, unsigned seed) {
  auto [tx, rx] = leanchan::channel<Msg>(cap);
  std::atomic<int> done{0};
  std::atomic<bool> stop_watchers{false};
  std::vector<std::thread> threads;
  std::atomic<long> sent{0};
  for (int s = 0; s < n_threads; ++s) {
    threads.emplace_back([&, s, tx = tx]() mutable {
      std::mt19937 rng(seed * 977 + s);
      int seq = 0;
      Flag flag;
      leanchan::Notifier notifier(&Flag::cb, &flag);
      for (int i = 0; i < iters; ++i) {
        int mode = (s + rng()) % 6;
        if (mode == 0) {
          if (!tx.send(Msg{s, seq}).ok()) break;
          ++seq;
          sent.fetch_add(1);
        } else if (mode == 1) {
          auto r = tx.send_for(Msg{s, seq}, std::chrono::microseconds(rng() % 50));
          if (r.ok()) {
            ++seq;
            sent.fetch_add(1);
          } else if (r.status() == leanchan::SendStatus::kClosed)
            break;
        } else if (mode == 2) {
          auto p = tx.reserve();
          if (!p) break;
          if (rng() % 2) {
            p.send(Msg{s, seq});
            ++seq;
            sent.fetch_add(1);
          }
        } else if (mode == 3) {
          std::size_t k = 1 + rng() % cap;
          auto b = tx.reserve_many(k);
          if (!b) break;
          std::size_t use = rng() % (k + 1);
          for (std::size_t j = 0; j < use; ++j) {
            b.send(Msg{s, seq});
            ++seq;
            sent.fetch_add(1);
          }
        } else if (mode == 4) {
          // notifier-based send
          for (;;) {
            auto r = tx.try_send(Msg{s, seq}, notifier);
            if (r.ok()) {
              ++seq;
              sent.fetch_add(1);
              break;
            }
            if (r.status() == leanchan::SendStatus::kClosed) goto out;
            flag.fired.store(0);
            if (tx.notify_when_room(notifier) != leanchan::RoomStatus::kArmed) continue;
            auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 200);
            while (flag.fired.load() == 0 && std::chrono::steady_clock::now() < until)
              std::this_thread::yield();
            if (flag.fired.load() == 0 && (rng() % 2)) {
              tx.cancel_notify(notifier);  // passes a grant on
              break;
            }
            while (flag.fired.load() == 0) std::this_thread::yield();
          }
        } else {
          (void)tx.closed_for(std::chrono::microseconds(rng() % 30));
        }
      }
    out:
      tx.cancel_notify(notifier);
      done.fetch_add(1);
    });
  }
  // closed watchers
  std::vector<std::thread> watchers;
  for (int w = 0; w < 2; ++w) {
    watchers.emplace_back([&, w, tx = tx]() mutable {
      std::mt19937 rng(seed + 100 + w);
      while (!stop_watchers.load()) {
        if (tx.closed_for(std::chrono::microseconds(rng() % 100))) break;
      }
    });
  }
  std::vector<int> last(n_threads, -1);
  long received = 0;
  std::mt19937 rng(seed);
  auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  for (;;) {
    if (close_midway && !closed && received > iters / 2) {
      rx.close();
      closed = true;
    }
    auto r = rx.recv_for(5ms);
    if (r.ok()) {
      Msg m = std::move(r).value();
      ASSERT_GT(m.seq, last[m.sender]) << "FIFO violated for sender " << m.sender;
      last[m.sender] = m.seq;
      ++received;
      if (rng() % 64 == 0) {
        for (unsigned k = rng() % 50; k > 0; --k) std::this_thread::yield();  // jitter
      }
      continue;
    }
    if (done.load() == n_threads) {
      auto r2 = rx.try_recv();
      if (r2.ok()) {
        Msg m = std::move(r2).value();
        last[m.sender] = m.seq;
        ++received;
        continue;
      }
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now() - t0, 60s)
        << "stuck: done=" << done.load() << " cap_free=" << tx.capacity();
  }
  for (auto& t : threads) t.join();
  stop_watchers.store(true);
  if (!closed) rx.close();
  for (auto& t : watchers) t.join();
  EXPECT_EQ(received, sent.load());
  EXPECT_EQ(tx.capacity(), cap) << "slot leaked";
}

// Rounds scaled for the build (sanitizer runs shrink them).
unsigned rounds(unsigned full) {
  return std::max(2u, static_cast<unsigned>(full * leanchan::testing::stress_scale()));
}

}  // namespace

TEST(MixedWaiters, Cap1) {
  for (unsigned i = 0; i < rounds(20); ++i) run_mix(1, 6, 400, false, i);
}
TEST(MixedWaiters, Cap3) {
  for (unsigned i = 0; i < rounds(20); ++i) run_mix(3, 6, 400, false, i);
}
TEST(MixedWaiters, Cap3Close) {
  for (unsigned i = 0; i < rounds(30); ++i) run_mix(3, 6, 400, true, i);
}
TEST(MixedWaiters, Cap8Close) {
  for (unsigned i = 0; i < rounds(20); ++i) run_mix(8, 8, 400, true, i);
}
