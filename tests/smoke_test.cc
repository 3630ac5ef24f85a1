#include <gtest/gtest.h>
#include <thread>
#include "leanchan/channel.h"

TEST(Smoke, SendRecv) {
  auto [tx, rx] = leanchan::channel<int, 4>(8);
  std::thread t([tx = std::move(tx)]() mutable {
    for (int i = 0; i < 100000; ++i) ASSERT_TRUE(tx.send(i).ok());
  });
  int expect = 0;
  while (auto v = rx.recv()) { ASSERT_EQ(*v, expect); ++expect; }
  EXPECT_EQ(expect, 100000);
  t.join();
}
