// SPDX-License-Identifier: MIT
// Receiving in a for loop: `for (T& v : rx)` and rx.iter() take every
// message once, in order, and end when the channel ends; try_iter() takes
// what is there and never sleeps.
#include <gtest/gtest.h>

#include <memory>
#include <ranges>
#include <thread>
#include <utility>
#include <vector>

#include "leanchan/channel.h"

namespace {

static_assert(std::ranges::input_range<leanchan::Receiver<int>>);
static_assert(std::ranges::input_range<decltype(std::declval<leanchan::Receiver<int>&>().iter())>);
static_assert(
    std::ranges::input_range<decltype(std::declval<leanchan::Receiver<int>&>().try_iter())>);

TEST(ReceiverIter, AForLoopTakesEveryMessageAndEndsWithTheChannel) {
  auto [tx, rx] = leanchan::channel<int>(4);
  std::thread producer([tx = std::move(tx)]() mutable {
    for (int i = 1; i <= 1000; ++i) ASSERT_TRUE(tx.send(i).ok());
  });  // the Sender goes with the thread's lambda: the channel ends
  std::vector<int> got;
  for (int& v : rx) got.push_back(v);
  producer.join();
  ASSERT_EQ(got.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i + 1);
  EXPECT_TRUE(rx.is_closed());
}

TEST(ReceiverIter, IterMovesOutMoveOnlyMessagesAndEndsAfterClose) {
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>>(8);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(tx.try_send(std::make_unique<int>(i)).ok());
  rx.close();  // the five queued still arrive, then the loop ends
  std::vector<std::unique_ptr<int>> kept;
  for (std::unique_ptr<int>& p : rx.iter()) kept.push_back(std::move(p));
  ASSERT_EQ(kept.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*kept[static_cast<std::size_t>(i)], i);
  EXPECT_FALSE(tx.try_send(std::make_unique<int>(9)).ok());
}

TEST(ReceiverIter, TryIterTakesWhatIsThereAndStopsAtEmpty) {
  auto [tx, rx] = leanchan::channel<int>(8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tx.try_send(i).ok());
  int count = 0;
  for (int& v : rx.try_iter()) EXPECT_EQ(v, count++);
  EXPECT_EQ(count, 3);
  for ([[maybe_unused]] int& v : rx.try_iter()) ++count;  // empty: no step, no sleep
  EXPECT_EQ(count, 3);
  ASSERT_TRUE(tx.try_send(7).ok());  // still open: later messages come
  auto it = rx.try_iter().begin();
  ASSERT_FALSE(it == std::default_sentinel);
  EXPECT_EQ(*it, 7);
}

}  // namespace
