// SPDX-License-Identifier: MIT
// Misuse the channel can see but not recover from fails loudly in every
// build (a message and an abort), never silently: a send through an empty
// permit (it used to dereference null in release builds), arming without a
// notifier (it used to wait forever for a callback that cannot come), a
// second awaiting coroutine on one receiver (it used to replace the first
// one's notifier, which then never resumed), a ReadySet destroyed before
// its entries, a pool, budget or registry destroyed under a channel, a
// moved-from handle used, a result's absent value read, a notifier
// destroyed while attached (the last three used to crash or run on in
// release builds). And the event-loop shapes the
// headers show end when the channel ends (the earlier ones spun on the
// ended channel's arm_notifier(), which is true for good).
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "coro_support.h"
#include "leanchan/block_pool.h"
#include "leanchan/channel.h"
#include "leanchan/channel_registry.h"
#include "leanchan/executor.h"
#include "leanchan/memory_budget.h"
#include "leanchan/ready_set.h"

namespace {

using leanchan::testing::Task;

// Reserves in a channel where the reservation fails (closed: reserve;
// full: try_reserve), then sends through the empty permit anyway.
void send_through_an_empty_permit(bool closed) {
  auto [tx, rx] = leanchan::channel<int>(1);
  if (closed) {
    rx.close();
  } else if (!tx.try_send(0).ok()) {
    return;  // no death: the test fails
  }
  auto permit = closed ? tx.reserve() : tx.try_reserve();  // empty: kClosed, kFull
  permit.send(1);
}

TEST(MisuseDeathTest, SendingThroughAnEmptyPermitAbortsWithAMessage) {
  for (bool closed : {true, false}) {
    EXPECT_DEATH(send_through_an_empty_permit(closed), "leanchan: Permit::send on an empty permit")
        << (closed ? "closed" : "full");
  }
}

// A moved-from handle has no channel: every call on it aborts with a
// message, in every build (release builds used to dereference null).
TEST(MisuseDeathTest, AMovedFromHandleAbortsWithAMessage) {
  auto [tx, rx] = leanchan::channel<int>(4);
  leanchan::Sender<int> tx2 = std::move(tx);
  leanchan::Receiver<int> rx2 = std::move(rx);
  leanchan::WeakSender<int> weak = tx2.downgrade();
  leanchan::WeakSender<int> weak2 = std::move(weak);
  // NOLINTBEGIN(bugprone-use-after-move): the misuse under test.
  EXPECT_DEATH((void)tx.try_send(1), "leanchan: use of a moved-from Sender");
  EXPECT_DEATH((void)tx.is_closed(), "leanchan: use of a moved-from Sender");
  EXPECT_DEATH((void)rx.try_recv(), "leanchan: use of a moved-from Receiver");
  EXPECT_DEATH((void)rx.len(), "leanchan: use of a moved-from Receiver");
  EXPECT_DEATH((void)weak.upgrade(), "leanchan: use of a moved-from WeakSender");
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_TRUE(tx2.try_send(1).ok());
  EXPECT_EQ(rx2.try_recv().value(), 1);
  EXPECT_TRUE(weak2.upgrade().has_value());
}

// value() of a result that holds none: a SendResult that is ok(), a
// RecvResult that is not (release builds used to read the empty storage).
TEST(MisuseDeathTest, ReadingAValueAResultDoesNotHoldAbortsWithAMessage) {
  auto [tx, rx] = leanchan::channel<std::vector<int>>(1);
  leanchan::SendResult<std::vector<int>> sent = tx.try_send({1, 2});
  ASSERT_TRUE(sent.ok());
  EXPECT_DEATH((void)sent.value().size(), "leanchan: value\\(\\) of a result that holds no value");
  leanchan::RecvResult<std::vector<int>> got = rx.try_recv();
  ASSERT_TRUE(got.ok());
  leanchan::RecvResult<std::vector<int>> empty = rx.try_recv();
  ASSERT_EQ(empty.status(), leanchan::RecvStatus::kEmpty);
  EXPECT_DEATH((void)std::move(empty).value().size(),
               "leanchan: value\\(\\) of a result that holds no value");
  EXPECT_EQ(got.value().size(), 2u);
}

// A notifier destroyed while still attached to a receiver: the receiver
// would later call it, or unlink it, after its end (release builds used to
// run on).
void destroy_an_attached_notifier() {
  auto [tx, rx] = leanchan::channel<int>(1);
  auto notifier = std::make_unique<leanchan::Notifier>([](void*) {}, nullptr);
  rx.set_notifier(*notifier);
  notifier.reset();
}

TEST(MisuseDeathTest, DestroyingAnAttachedNotifierAbortsWithAMessage) {
  EXPECT_DEATH(destroy_an_attached_notifier(),
               "leanchan: Notifier destroyed while attached to a receiver");
}

TEST(MisuseDeathTest, SendingThroughAUsedBatchAbortsWithAMessage) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_DEATH(
      {
        auto batch = tx.reserve_many(1);
        batch.send(1);
        batch.send(2);  // no slot left
      },
      "leanchan: PermitBatch::send with no slot left");
}

TEST(MisuseDeathTest, ArmingWithoutANotifierAbortsWithAMessage) {
  auto [tx, rx] = leanchan::channel<int>(4);
  EXPECT_DEATH((void)rx.arm_notifier(), "leanchan: Receiver::arm_notifier without a notifier");
}

Task await_one(leanchan::Receiver<int>& rx, leanchan::Executor& executor, std::optional<int>& out) {
  out = co_await rx.async_recv(executor);
}

// Two coroutines awaiting one receiver at once.
void await_with_two_coroutines() {
  auto [tx, rx] = leanchan::channel<int>(4);
  leanchan::ManualExecutor executor;
  std::optional<int> first;
  std::optional<int> second;
  Task a = await_one(rx, executor, first);
  Task b = await_one(rx, executor, second);
  a.handle.resume();  // suspends: its notifier is attached
  b.handle.resume();  // would replace it
}

TEST(MisuseDeathTest, ASecondCoroutineAwaitingOneReceiverAbortsWithAMessage) {
  EXPECT_DEATH(await_with_two_coroutines(),
               "leanchan: async_recv on a Receiver that has a notifier attached");
}

void on_ready(void* fired) {
  *static_cast<bool*>(fired) = true;
}

// A coroutine awaiting a receiver that has the program's own notifier.
void await_over_a_notifier() {
  auto [tx, rx] = leanchan::channel<int>(4);
  bool fired = false;
  leanchan::Notifier notifier(&on_ready, &fired);
  rx.set_notifier(notifier);
  leanchan::ManualExecutor executor;
  std::optional<int> out;
  Task a = await_one(rx, executor, out);
  a.handle.resume();
}

TEST(MisuseDeathTest, AwaitingAReceiverWithTheProgramsNotifierAbortsWithAMessage) {
  EXPECT_DEATH(await_over_a_notifier(),
               "leanchan: async_recv on a Receiver that has a notifier attached");
}

// One notifier attached to two receivers at once: it would join the two
// channels' waiter rings (a slot freed in one handed to a waiter of the
// other).
void attach_to_two_receivers() {
  auto [tx1, rx1] = leanchan::channel<int>(1);
  auto [tx2, rx2] = leanchan::channel<int>(1);
  bool fired = false;
  leanchan::Notifier notifier(&on_ready, &fired);
  rx1.set_notifier(notifier);
  rx2.set_notifier(notifier);
}

TEST(MisuseDeathTest, ANotifierAttachedToTwoReceiversAbortsWithAMessage) {
  EXPECT_DEATH(attach_to_two_receivers(),
               "leanchan: set_notifier with a Notifier attached to another receiver");
}

// A ReadySet destroyed before an entry made on it: the entry would later
// fire into the destroyed set, or unlink itself from it.
void destroy_a_set_before_its_entry() {
  std::optional<leanchan::ReadySet> ready(std::in_place);
  leanchan::ReadyEntry entry(*ready, nullptr);
  ready.reset();
}

TEST(MisuseDeathTest, DestroyingAReadySetBeforeItsEntryAbortsWithAMessage) {
  EXPECT_DEATH(destroy_a_set_before_its_entry(),
               "leanchan: ReadySet destroyed while an entry made on it is alive");
}

// A pool, budget or registry destroyed under a channel that still uses
// it: the channel would later free into unmapped memory, refund a
// destroyed budget, or unlink itself from a destroyed registry, far from
// the mistake (a pool's unmapped control block crashed in close()).
void destroy_a_pool_under_a_channel() {
  std::optional<leanchan::BlockPool> pool(std::in_place);
  auto channel = leanchan::channel<int>(4, {.memory = &*pool});
  pool.reset();
}
void destroy_a_budget_under_a_channel() {
  std::optional<leanchan::MemoryBudget> budget(std::in_place, std::size_t{1} << 20);
  auto channel = leanchan::channel<int>(4, {.memory = &*budget});
  budget.reset();
}
void destroy_a_registry_under_a_channel() {
  std::optional<leanchan::ChannelRegistry> registry(std::in_place);
  auto channel = leanchan::channel<int>(4, {.registry = &*registry});
  registry.reset();
}

TEST(MisuseDeathTest, DestroyingWhatAChannelUsesAbortsWithAMessage) {
  EXPECT_DEATH(destroy_a_pool_under_a_channel(),
               "leanchan: BlockPool destroyed while allocations from it are live");
  EXPECT_DEATH(destroy_a_budget_under_a_channel(),
               "leanchan: MemoryBudget destroyed while it still holds allocations");
  EXPECT_DEATH(destroy_a_registry_under_a_channel(),
               "leanchan: ChannelRegistry destroyed while channels are listed");
}

// Attaching the same notifier to the same receiver again is fine.
TEST(Misuse, SettingTheSameNotifierTwiceIsFine) {
  auto [tx, rx] = leanchan::channel<int>(4);
  bool fired = false;
  leanchan::Notifier notifier(&on_ready, &fired);
  rx.set_notifier(notifier);
  rx.set_notifier(notifier);
  EXPECT_FALSE(rx.arm_notifier());
  ASSERT_TRUE(tx.try_send(1).ok());
  EXPECT_TRUE(fired);
  rx.clear_notifier();
}

// Send notifiers woken together (two granted at once, or every waiter at
// close()) are chained through their links while they fire; each comes
// back idle and unlinked, so it may serve a receiver next (the chain's
// link, left behind, read as "attached elsewhere").
TEST(Misuse, SendNotifiersWokenTogetherMayServeAReceiverNext) {
  auto [tx, rx] = leanchan::channel<int>(1);
  ASSERT_TRUE(tx.try_send(0).ok());
  bool fired_a = false;
  bool fired_b = false;
  leanchan::Notifier a(&on_ready, &fired_a);
  leanchan::Notifier b(&on_ready, &fired_b);
  ASSERT_EQ(tx.notify_when_room(a), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(tx.notify_when_room(b), leanchan::RoomStatus::kArmed);
  rx.close();  // wakes both, chained
  EXPECT_TRUE(fired_a);
  EXPECT_TRUE(fired_b);
  (void)tx.cancel_notify(a);
  (void)tx.cancel_notify(b);
  auto [tx2, rx2] = leanchan::channel<int>(4);
  rx2.set_notifier(a);  // aborted: "attached to another receiver"
  ASSERT_TRUE(tx2.try_send(1).ok());
  EXPECT_TRUE(rx2.arm_notifier());  // the message is there
  rx2.clear_notifier();
  rx2.set_notifier(b);
  rx2.clear_notifier();
}

// The same receiver awaited by one coroutine after another is fine: each
// detaches before the next attaches.
TEST(Misuse, CoroutinesAwaitingOneReceiverInTurnEachGetAMessage) {
  auto [tx, rx] = leanchan::channel<int>(4);
  leanchan::ManualExecutor executor;
  std::optional<int> first;
  std::optional<int> second;
  Task a = await_one(rx, executor, first);
  a.handle.resume();
  ASSERT_TRUE(tx.try_send(1).ok());
  executor.run_pending();
  ASSERT_TRUE(a.done());
  EXPECT_FALSE(rx.has_notifier());
  Task b = await_one(rx, executor, second);
  b.handle.resume();
  ASSERT_TRUE(tx.try_send(2).ok());
  executor.run_pending();
  ASSERT_TRUE(b.done());
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
}

// leanchan/notifier.h's loop, as written there: it handles every message
// and stops once the channel has ended (bounded here, so that a loop that
// spins fails instead of hanging).
TEST(Misuse, TheNotifierHeadersLoopEndsWithTheChannel) {
  auto [tx, rx] = leanchan::channel<int>(4);
  bool fired = false;
  leanchan::Notifier notifier(&on_ready, &fired);
  rx.set_notifier(notifier);
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_TRUE(tx.try_send(2).ok());
  { auto gone = std::move(tx); }  // the last sender: the channel ends after these two
  std::vector<int> handled;
  bool ended = false;
  int looks = 0;
  for (; looks < 100; ++looks) {
    auto r = rx.poll_recv();
    if (r.ok()) {
      handled.push_back(std::move(r).value());
      continue;
    }
    if (r.status() == leanchan::PollStatus::kDisconnected) {
      rx.clear_notifier();
      ended = true;
      break;
    }
    if (!rx.arm_notifier()) break;
  }
  EXPECT_TRUE(ended);
  EXPECT_LT(looks, 100);
  EXPECT_EQ(handled, (std::vector<int>{1, 2}));
  // The trap the loop avoids: an ended channel's arm_notifier() is true
  // every time, so a loop that only re-arms never stops.
  bool fired_again = false;
  leanchan::Notifier again(&on_ready, &fired_again);
  rx.set_notifier(again);
  EXPECT_TRUE(rx.arm_notifier());
  EXPECT_TRUE(rx.arm_notifier());
  rx.clear_notifier();
}

// leanchan/ready_set.h's drain body, as written there, with its Service:
// one drain handles the messages and marks the service ended.
struct Service {
  Service(leanchan::Receiver<int> receiver, leanchan::ReadySet& set)
      : entry(set, this), rx(std::move(receiver)) {}
  leanchan::ReadyEntry entry;
  leanchan::Receiver<int> rx;
  bool ended = false;
};

TEST(Misuse, TheReadySetHeadersDrainEndsWithTheChannel) {
  leanchan::ReadySet ready;
  auto [tx, rx] = leanchan::channel<int>(4);
  Service service(std::move(rx), ready);
  service.entry.watch(service.rx);
  ASSERT_TRUE(tx.try_send(7).ok());
  { auto gone = std::move(tx); }
  std::vector<int> handled;
  int looks = 0;
  const std::size_t drained = ready.drain([&](leanchan::ReadyEntry& entry) {
    auto* s = static_cast<Service*>(entry.user());
    do {
      for (;;) {
        auto r = s->rx.poll_recv();
        if (r.ok()) {
          handled.push_back(std::move(r).value());
          continue;
        }
        if (r.status() == leanchan::PollStatus::kDisconnected) s->ended = true;
        break;
      }
    } while (!s->ended && s->rx.arm_notifier() && ++looks < 100);
  });
  EXPECT_EQ(drained, 1u);
  EXPECT_TRUE(service.ended);
  EXPECT_LT(looks, 100);
  EXPECT_EQ(handled, (std::vector<int>{7}));
}

}  // namespace
