// SPDX-License-Identifier: MIT
// Which watch a blocking receive that finds nothing uses (docs/design.md,
// "The deep watch", "The long watch" and "The rest-of-block watch"), after a run of two messages or
// more (taken by recv or drained by recv_many): the long one in a channel
// whose senders can run 512 messages or more ahead of the receiver
// (kFirstLong slots here), the deep one from 64 (kFirstDeep), the
// doubling one below that and after a message that came alone. Observed
// with test points at the start of the receiver's watch
// (kReceiverWatchesLong, kReceiverWatchesDeep, kReceiverWatchesShort),
// and before it, in a shallow channel, of the rest-of-block watch
// (kReceiverWatchesRestOfBlock); linked against the test-points build of
// the library.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "leanchan/channel.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/ending.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace {

using leanchan::internal::TestPoint;

// The first watch the receive makes: 0 none yet, else its Watch. (Only
// the first counts: a wake-up without the message, rare as it is, starts
// a new run and so a doubling watch.)
enum Watch : int { kNone = 0, kShort = 1, kDeep = 2, kLong = 3 };
std::atomic<int> first_watch{kNone};
// Whether the rest-of-block watch ran before it.
std::atomic<bool> rest_watch{false};

void count(TestPoint point) {
  int seen = kNone;
  switch (point) {
    case TestPoint::kReceiverWatchesRestOfBlock:
      if (first_watch.load() == kNone) rest_watch = true;
      return;
    case TestPoint::kReceiverWatchesShort: seen = kShort; break;
    case TestPoint::kReceiverWatchesDeep: seen = kDeep; break;
    case TestPoint::kReceiverWatchesLong: seen = kLong; break;
    default: return;
  }
  int none = kNone;
  if (first_watch.compare_exchange_strong(none, seen)) first_watch.notify_all();
}

enum class Drain { kRecv, kRecvMany };

// The smallest deep and long capacities with the 8-slot blocks used
// here: runway C - 8 + 1 = WaitPolicy::deep_runway, long_runway.
constexpr std::size_t kFirstDeep = leanchan::internal::kWaitPolicy.deep_runway + 8 - 1;
constexpr std::size_t kFirstLong = leanchan::internal::kWaitPolicy.long_runway + 8 - 1;

// A message of 128 bytes, above WaitPolicy::rest_of_block_max_message_bytes.
struct Large {
  int value = 0;
  char padding[124] = {};
  bool operator==(int other) const { return value == other; }
};
static_assert(sizeof(Large) > leanchan::internal::kWaitPolicy.rest_of_block_max_message_bytes);

struct Watches {
  Watch first;  // the watch before the sleep
  bool rest;    // the rest-of-block watch came before it
};

// Queues `backlog` messages, takes them all (none needs a watch), then
// receives once more while a sender waits for that receive to start
// watching before it sends. Which watches that receive made.
template <class Msg = int>
Watches watches_after(std::size_t capacity, int backlog, Drain drain) {
  first_watch = kNone;
  rest_watch = false;
  auto tx_rx = leanchan::channel<Msg, 8>(capacity);  // no structured binding: captured below
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  for (int i = 0; i < backlog; ++i) EXPECT_TRUE(tx.try_send(Msg{i}).ok());
  leanchan::internal::test_point_hook.store(&count);
  if (drain == Drain::kRecv) {
    for (int i = 0; i < backlog; ++i) EXPECT_TRUE(*rx.recv() == i);
  } else {
    std::vector<Msg> out;
    EXPECT_EQ(rx.recv_many(out, 100), static_cast<std::size_t>(backlog));
  }
  EXPECT_EQ(first_watch.load(), kNone);  // every one of them was there
  EXPECT_FALSE(rest_watch.load());
  std::thread sender([&tx] {
    first_watch.wait(kNone);
    EXPECT_TRUE(tx.send(Msg{99}).ok());
  });
  EXPECT_TRUE(*rx.recv() == 99);
  sender.join();
  leanchan::internal::test_point_hook.store(nullptr);
  return {static_cast<Watch>(first_watch.load()), rest_watch.load()};
}

Watch watch_after(std::size_t capacity, int backlog, Drain drain) {
  return watches_after(capacity, backlog, drain).first;
}

TEST(ReceiverWatch, ABacklogSelectsTheChannelsWatchByItsRunway) {
  EXPECT_EQ(watch_after(1024, 3, Drain::kRecv), kLong);
  EXPECT_EQ(watch_after(kFirstLong, 2, Drain::kRecv), kLong);
  EXPECT_EQ(watch_after(kFirstLong - 1, 3, Drain::kRecv), kDeep);
  EXPECT_EQ(watch_after(kFirstDeep, 2, Drain::kRecv), kDeep);
}

TEST(ReceiverWatch, AMessageThatCameAloneKeepsTheDoublingWatch) {
  EXPECT_EQ(watch_after(1024, 1, Drain::kRecv), kShort);
  EXPECT_EQ(watch_after(kFirstDeep, 1, Drain::kRecv), kShort);
}

TEST(ReceiverWatch, AShallowChannelNeverWatchesDeep) {
  EXPECT_EQ(watch_after(15, 3, Drain::kRecv), kShort);
  EXPECT_EQ(watch_after(16, 3, Drain::kRecv), kShort);  // runway 9
  EXPECT_EQ(watch_after(kFirstDeep - 1, 3, Drain::kRecv), kShort);
}

TEST(ReceiverWatch, ABacklogDrainedByRecvManyCountsToo) {
  EXPECT_EQ(watch_after(1024, 3, Drain::kRecvMany), kLong);
  EXPECT_EQ(watch_after(kFirstDeep, 3, Drain::kRecvMany), kDeep);
}

// A receiver streaming from a shallow channel first lets the sender
// finish the block (docs/design.md, "The rest-of-block watch"): after a
// run of two, with two slots or more of its block left, where there is
// room for more than one block or the message is small; then the doubling
// watch, as before.
TEST(ReceiverWatch, AStreamInAShallowChannelWatchesTheRestOfTheBlockFirst) {
  const Watches shallow = watches_after(16, 3, Drain::kRecv);  // slot 3 of 8
  EXPECT_TRUE(shallow.rest);
  EXPECT_EQ(shallow.first, kShort);
  EXPECT_TRUE(watches_after(16, 2, Drain::kRecvMany).rest);
  EXPECT_TRUE(watches_after(8, 3, Drain::kRecv).rest);          // one block, small messages
  EXPECT_TRUE(watches_after<Large>(16, 3, Drain::kRecv).rest);  // two blocks, large messages
}

TEST(ReceiverWatch, TheRestOfBlockWatchOnlyWhereItPays) {
  EXPECT_FALSE(watches_after(16, 1, Drain::kRecv).rest);          // a message that came alone
  EXPECT_FALSE(watches_after(16, 7, Drain::kRecv).rest);          // one slot of the block left
  EXPECT_FALSE(watches_after(1, 1, Drain::kRecv).rest);           // one-slot blocks
  EXPECT_FALSE(watches_after<Large>(8, 3, Drain::kRecv).rest);    // one block, large messages
  EXPECT_FALSE(watches_after(kFirstDeep, 3, Drain::kRecv).rest);  // the deep watch instead
  EXPECT_FALSE(watches_after(1024, 3, Drain::kRecv).rest);        // the long watch instead
}

// The rest-of-block watch itself, on a block made here: it stops at the
// first look once the rest of the block is published, at the second when
// only its next slot is and nothing changed between the looks, and
// otherwise makes all its looks; none for a block with another tag.
TEST(RestOfBlockWatch, StopsWhenTheRestIsThereOrTheSenderStopped) {
  using leanchan::internal::Ending;
  using leanchan::internal::kWaitPolicy;
  leanchan::internal::BlockHeader block;
  block.number.store(5);
  block.ready.store(0xFF);  // slots 0..7 of 8
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8), 1);
  block.ready.store(0x0F);  // slot 3 there, 4..7 not
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8), 2);
  block.ready.store(0x07);  // slot 3 missing
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 3, 8), kWaitPolicy.rest_of_block.looks());
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 6, 3, 8), 0);
  EXPECT_EQ(Ending::watch_rest_of_block(nullptr, 5, 3, 8), 0);
  // The mask at the ends of a 32-slot block.
  block.ready.store(0xFFFFFFFF);
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 0, 32), 1);
  block.ready.store(0x80000000);
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 31, 32), 1);
  block.ready.store(0x7FFFFFFF);
  EXPECT_EQ(Ending::watch_rest_of_block(&block, 5, 31, 32), kWaitPolicy.rest_of_block.looks());
}

}  // namespace
