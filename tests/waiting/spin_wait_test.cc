// SPDX-License-Identifier: MIT
// The receiver's watch before it sleeps (leanchan/internal/spin_wait.h):
// the pauses between its looks, counted exactly with a counting pause, and
// which watch a blocking receive selects (ChannelOps::watch_deep): the
// deep one only in a channel whose senders can run 64 messages or more
// ahead of the receiver, after a run of two messages or more.
#include "leanchan/internal/spin_wait.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/channel_ops.h"

namespace {

using leanchan::internal::SpinBudget;

// The pauses made between consecutive looks of a watch that never finds
// what it looks for, one entry per look that is followed by pauses.
std::vector<int> pauses_between_looks(const SpinBudget& budget) {
  std::vector<int> gaps;
  int looks = 0;
  int pauses = 0;
  const bool found = leanchan::internal::watch(
      budget,
      [&] {
        if (looks++ > 0 && pauses > 0) gaps.push_back(pauses);
        pauses = 0;
        return false;
      },
      [&] { ++pauses; });
  EXPECT_FALSE(found);
  EXPECT_EQ(looks, budget.looks());
  return gaps;
}

TEST(SpinWait, TheReceiverWatchDoublesItsPausesFromOne) {
  // Each of the first 16 looks is followed by pauses (the 16th's before the
  // first look after a yield), doubling from 1 to 64.
  const std::vector<int> gaps = pauses_between_looks(leanchan::internal::kReceiverWatch);
  const std::vector<int> expected = {1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64};
  EXPECT_EQ(gaps, expected);
}

TEST(SpinWait, TheDeepReceiverWatchStartsAtItsLongestPause) {
  const std::vector<int> gaps = pauses_between_looks(leanchan::internal::kDeepReceiverWatch);
  EXPECT_EQ(gaps, std::vector<int>(16, 64));
  EXPECT_EQ(leanchan::internal::kDeepReceiverWatch.looks(),
            leanchan::internal::kReceiverWatch.looks());
}

TEST(SpinWait, AWatchThatFindsItLooksNoFurther) {
  int looks = 0;
  int pauses = 0;
  EXPECT_TRUE(leanchan::internal::watch(
      leanchan::internal::kDeepReceiverWatch, [&] { return ++looks == 3; }, [&] { ++pauses; }));
  EXPECT_EQ(looks, 3);
  EXPECT_EQ(pauses, 2 * 64);
}

// The receiver of a channel whose senders can run 64 messages or more
// ahead of it (the runway: C - b + 1, the receiver owing up to b - 1 of
// the C slots) may watch with the deep budget; below that, never.
template <std::size_t BlockSize>
bool deep_for(std::uint32_t capacity) {
  using Ops = leanchan::internal::ChannelOps<int, BlockSize>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(capacity, Ops::slots_for(capacity),
                                             leanchan::Retention::kKeepOne, nullptr);
  const bool deep = Ops::cursor_for(*state).deep;
  ChannelState::destroy(state);
  return deep;
}

// The smallest capacity that is deep with b-slot blocks (b <= capacity):
// runway C - b + 1 = kDeepReceiverRunway.
constexpr std::uint32_t first_deep(std::uint32_t b) {
  return leanchan::internal::kDeepReceiverRunway + b - 1;
}

TEST(SpinWait, TheRunwaySelectsTheReceiversWatch) {
  // Both sides of the boundary, for three block sizes.
  EXPECT_FALSE(deep_for<8>(first_deep(8) - 1));
  EXPECT_TRUE(deep_for<8>(first_deep(8)));
  EXPECT_FALSE(deep_for<32>(first_deep(32) - 1));
  EXPECT_TRUE(deep_for<32>(first_deep(32)));
  EXPECT_FALSE(deep_for<1>(first_deep(1) - 1));
  EXPECT_TRUE(deep_for<1>(first_deep(1)));
  // Capacity 16, which the first rule (16 slots or more) made deep: its
  // runway is 9 with b = 8 and 1 with b = 16 (B = 32).
  static_assert(first_deep(8) > 16 && first_deep(1) > 16);
  EXPECT_FALSE(deep_for<8>(16));
  EXPECT_FALSE(deep_for<32>(16));
  EXPECT_FALSE(deep_for<8>(1));
  EXPECT_TRUE(deep_for<32>(1024));
}

// The watch after a run of messages taken by blocking receives: deep after
// two or more (a backlog: a sender streams ahead), doubling after one (a
// message that came alone, as a reply does) or none.
TEST(SpinWait, ARunOfTwoSelectsTheDeepWatch) {
  using Ops = leanchan::internal::ChannelOps<int, 8>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(1024, 8, leanchan::Retention::kKeepOne, nullptr);
  Ops::Cursor cursor = Ops::cursor_for(*state);
  EXPECT_FALSE(Ops::watch_deep(cursor));  // nothing taken yet
  Ops::count_run(cursor);
  EXPECT_FALSE(Ops::watch_deep(cursor));  // one: a reply
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_TRUE(Ops::watch_deep(cursor));   // a backlog of five
  EXPECT_FALSE(Ops::watch_deep(cursor));  // the watch started a new run: none yet
  Ops::count_run(cursor);
  Ops::count_run(cursor);
  EXPECT_TRUE(Ops::watch_deep(cursor));
  Ops::count_run(cursor);
  EXPECT_FALSE(Ops::watch_deep(cursor));  // the stream slowed to one per watch
  ChannelState::destroy(state);

  // A shallow channel never watches deep, whatever its runs.
  state = ChannelState::create(15, 8, leanchan::Retention::kKeepOne, nullptr);
  cursor = Ops::cursor_for(*state);
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_FALSE(Ops::watch_deep(cursor));
  ChannelState::destroy(state);
}

}  // namespace
