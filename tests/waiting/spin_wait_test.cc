// SPDX-License-Identifier: MIT
// The receiver's watch before it sleeps (leanchan/internal/spin_wait.h):
// the pauses between its looks, counted exactly with a counting pause, and
// which watch a blocking receive selects (ChannelOps::watch_depth): the
// deep one only in a channel whose senders can run 64 messages or more
// ahead of the receiver, the long one from 512, after a run of two
// messages or more.
#include "leanchan/internal/spin_wait.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/channel_ops.h"

namespace {

using leanchan::internal::SpinBudget;
using leanchan::internal::WatchDepth;

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

TEST(SpinWait, TheLongReceiverWatchPausesAsLongInFewerLooks) {
  using leanchan::internal::kDeepReceiverWatch;
  using leanchan::internal::kLongReceiverWatch;
  const std::vector<int> gaps = pauses_between_looks(kLongReceiverWatch);
  EXPECT_EQ(gaps, std::vector<int>(2, 512));
  // The same pauses before the yields as the deep watch (16 x 64), and the
  // same yields after them.
  EXPECT_EQ(kLongReceiverWatch.pauses * kLongReceiverWatch.max_pause,
            kDeepReceiverWatch.pauses * kDeepReceiverWatch.max_pause);
  EXPECT_EQ(kLongReceiverWatch.yields, kDeepReceiverWatch.yields);
}

// The first look at which the receiver's watch asks for the end: the
// first whose earlier gaps (pauses_between_looks) add up to
// kReceiverEndCheckAfterPauses.
int first_look_after_pausing(const SpinBudget& budget, int pauses) {
  const std::vector<int> gaps = pauses_between_looks(budget);
  int paused = 0;
  for (std::size_t look = 0; look < gaps.size(); ++look) {
    if (paused >= pauses) return static_cast<int>(look);
    paused += gaps[look];
  }
  return static_cast<int>(gaps.size());
}

TEST(SpinWait, EveryReceiverWatchAsksForTheEndAfterTheSamePauses) {
  using leanchan::internal::kReceiverEndCheckAfterPauses;
  using leanchan::internal::looks_before_pausing;
  // 1 + 2 + 4 + 8 = 15 pauses before the fifth look of the doubling
  // watch; one gap of 64 or 512 before the second look of the others.
  EXPECT_EQ(looks_before_pausing(leanchan::internal::kReceiverWatch, kReceiverEndCheckAfterPauses),
            4);
  EXPECT_EQ(
      looks_before_pausing(leanchan::internal::kDeepReceiverWatch, kReceiverEndCheckAfterPauses),
      1);
  EXPECT_EQ(
      looks_before_pausing(leanchan::internal::kLongReceiverWatch, kReceiverEndCheckAfterPauses),
      1);
  for (const SpinBudget* budget :
       {&leanchan::internal::kReceiverWatch, &leanchan::internal::kDeepReceiverWatch,
        &leanchan::internal::kLongReceiverWatch}) {
    EXPECT_EQ(looks_before_pausing(*budget, kReceiverEndCheckAfterPauses),
              first_look_after_pausing(*budget, kReceiverEndCheckAfterPauses));
  }
  // A watch that never pauses that long asks from its first yield.
  const SpinBudget short_one = leanchan::internal::spin_budget_of(2, 3, 4);  // 1 + 2 pauses
  EXPECT_EQ(looks_before_pausing(short_one, kReceiverEndCheckAfterPauses), 2);
  EXPECT_EQ(first_look_after_pausing(short_one, kReceiverEndCheckAfterPauses), 2);
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
// the C slots) may watch with the deep budget, from 512 with the long one;
// below 64, never.
template <std::size_t BlockSize>
WatchDepth depth_for(std::uint32_t capacity) {
  using Ops = leanchan::internal::ChannelOps<int, BlockSize>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(capacity, Ops::slots_for(capacity),
                                             leanchan::Retention::kKeepOne, nullptr);
  const WatchDepth depth = Ops::cursor_for(*state).depth;
  ChannelState::destroy(state);
  return depth;
}

// The smallest capacity with a runway of `runway` with b-slot blocks
// (b <= capacity): C - b + 1 = runway.
constexpr std::uint32_t first_with(std::uint32_t runway, std::uint32_t b) {
  return runway + b - 1;
}
constexpr std::uint32_t first_deep(std::uint32_t b) {
  return first_with(leanchan::internal::kDeepReceiverRunway, b);
}
constexpr std::uint32_t first_long(std::uint32_t b) {
  return first_with(leanchan::internal::kLongReceiverRunway, b);
}

TEST(SpinWait, TheRunwaySelectsTheReceiversWatch) {
  // Both sides of each boundary, for three block sizes.
  EXPECT_EQ(depth_for<8>(first_deep(8) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<8>(first_deep(8)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<32>(first_deep(32) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(first_deep(32)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<1>(first_deep(1) - 1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<1>(first_deep(1)), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<8>(first_long(8) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<8>(first_long(8)), WatchDepth::kLong);
  EXPECT_EQ(depth_for<32>(first_long(32) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<32>(first_long(32)), WatchDepth::kLong);
  EXPECT_EQ(depth_for<1>(first_long(1) - 1), WatchDepth::kDeep);
  EXPECT_EQ(depth_for<1>(first_long(1)), WatchDepth::kLong);
  // Capacity 16, which the first rule (16 slots or more) made deep: its
  // runway is 9 with b = 8 and 1 with b = 16 (B = 32).
  static_assert(first_deep(8) > 16 && first_deep(1) > 16);
  EXPECT_EQ(depth_for<8>(16), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(16), WatchDepth::kShort);
  EXPECT_EQ(depth_for<8>(1), WatchDepth::kShort);
  EXPECT_EQ(depth_for<32>(1024), WatchDepth::kLong);
}

// The watch after a run of messages taken by blocking receives: the
// channel's depth after two or more (a backlog: a sender streams ahead),
// doubling after one (a message that came alone, as a reply does) or none.
TEST(SpinWait, ARunOfTwoSelectsTheChannelsDepth) {
  using Ops = leanchan::internal::ChannelOps<int, 8>;
  using leanchan::internal::ChannelState;
  ChannelState* state = ChannelState::create(1024, 8, leanchan::Retention::kKeepOne, nullptr);
  Ops::Cursor cursor = Ops::cursor_for(*state);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // nothing taken yet
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // one: a reply
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kLong);   // a backlog of five
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // a new run: none yet
  Ops::count_run(cursor);
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kLong);
  Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);  // one per watch now
  ChannelState::destroy(state);

  // A deep channel below the long runway watches deep, not long.
  state = ChannelState::create(256, 8, leanchan::Retention::kKeepOne, nullptr);
  cursor = Ops::cursor_for(*state);
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kDeep);
  ChannelState::destroy(state);

  // A shallow channel never watches deep, whatever its runs.
  state = ChannelState::create(15, 8, leanchan::Retention::kKeepOne, nullptr);
  cursor = Ops::cursor_for(*state);
  for (int i = 0; i < 5; ++i) Ops::count_run(cursor);
  EXPECT_EQ(Ops::watch_depth(cursor), WatchDepth::kShort);
  ChannelState::destroy(state);
}

}  // namespace
