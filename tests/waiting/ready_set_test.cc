// SPDX-License-Identifier: MIT
// One thread serves 10,000 channels through a ReadySet and epoll: every
// event is delivered exactly once, and every channel's end is seen.
#include "leanchan/ready_set.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

struct Event {
  std::uint32_t id;  // unique across the test
};

struct Service {  // the entry first: the receiver, destroyed before it, detaches it
  Service(leanchan::Receiver<Event, 4> receiver, leanchan::ReadySet& set)
      : entry(set, this), rx(std::move(receiver)) {}
  leanchan::ReadyEntry entry;
  leanchan::Receiver<Event, 4> rx;
  bool ended = false;
};

TEST(ReadySet, OneThreadServesTenThousandChannels) {
  constexpr int kChannels = 10'000;
  const int per_producer =
      std::max(2000, static_cast<int>(100'000 * leanchan::testing::stress_scale()));
  constexpr int kProducers = 2;
  leanchan::ReadySet ready;
  std::vector<std::unique_ptr<Service>> services;
  std::vector<leanchan::Sender<Event, 4>> senders;
  services.reserve(kChannels);
  for (int i = 0; i < kChannels; ++i) {
    auto [tx, rx] = leanchan::channel<Event, 4>(8);
    services.push_back(std::make_unique<Service>(std::move(rx), ready));
    EXPECT_FALSE(services.back()->entry.watch(services.back()->rx));
    senders.push_back(std::move(tx));
  }

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&senders, p, per_producer] {
      std::mt19937 random(static_cast<std::uint32_t>(p));
      for (int i = 0; i < per_producer; ++i) {
        auto& tx = senders[random() % senders.size()];
        ASSERT_TRUE(tx.send(Event{static_cast<std::uint32_t>(p * per_producer + i)}).ok());
      }
    });
  }

  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(epoll, 0);
  epoll_event in{};
  in.events = EPOLLIN;
  ASSERT_EQ(::epoll_ctl(epoll, EPOLL_CTL_ADD, ready.fd(), &in), 0);

  std::vector<std::uint8_t> seen(static_cast<std::size_t>(kProducers * per_producer), 0);
  int received = 0;
  int ended = 0;
  bool producers_joined = false;
  while (ended < kChannels) {
    if (!producers_joined && received == kProducers * per_producer) {
      for (auto& t : producers) t.join();
      producers_joined = true;
      senders.clear();  // every channel now ends; each receiver is notified
    }
    epoll_event out{};
    const int n = ::epoll_wait(epoll, &out, 1, 10'000);
    ASSERT_EQ(n, 1) << "no readiness within 10 s: a notification was lost";
    ready.drain([&](leanchan::ReadyEntry& entry) {
      auto* service = static_cast<Service*>(entry.user());
      do {
        for (;;) {
          auto result = service->rx.try_recv();
          if (result.ok()) {
            const std::uint32_t id = result.value().id;
            ASSERT_EQ(seen[id], 0) << "event " << id << " delivered twice";
            seen[id] = 1;
            ++received;
          } else {
            if (result.status() == leanchan::RecvStatus::kDisconnected && !service->ended) {
              service->ended = true;
              ++ended;
            }
            break;
          }
        }
      } while (!service->ended && service->rx.arm_notifier());
    });
  }
  ::close(epoll);
  if (!producers_joined) {
    for (auto& t : producers) t.join();
  }
  EXPECT_EQ(received, kProducers * per_producer);
  for (std::size_t id = 0; id < seen.size(); ++id)
    ASSERT_EQ(seen[id], 1) << "event " << id << " lost";
}

}  // namespace
