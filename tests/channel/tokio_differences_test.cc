// SPDX-License-Identifier: MIT
// Where the sending API's edge cases answer otherwise than Tokio's bounded
// mpsc (docs/differences.md cites each test by name): reserve_many(0) on a
// closed channel, a count above max_capacity(), what strong_count()
// counts, and the counts a WeakSender and the Receiver do not have.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "leanchan/channel.h"

namespace {

using leanchan::RecvStatus;
using leanchan::SendStatus;

// Tokio: WeakSender::strong_count / weak_count and
// Receiver::sender_strong_count / sender_weak_count.
template <class Handle>
concept HasStrongCount = requires(const Handle& handle) {
  handle.strong_count();
};
template <class Handle>
concept HasWeakCount = requires(const Handle& handle) {
  handle.weak_count();
};
template <class Handle>
concept HasSenderStrongCount = requires(const Handle& handle) {
  handle.sender_strong_count();
};
template <class Handle>
concept HasSenderWeakCount = requires(const Handle& handle) {
  handle.sender_weak_count();
};

// Zero slots is the empty reservation: it succeeds with an empty batch,
// open or closed, full or not, and never waits (Tokio: Err on a closed
// channel). Any other reservation on the same closed channel is kClosed.
TEST(TokioDifferences, ReserveManyOfZeroOnAClosedChannelIsOkAndEmpty) {
  auto [tx, rx] = leanchan::channel<int>(2);
  ASSERT_TRUE(tx.try_send(1).ok());
  ASSERT_TRUE(tx.try_send(2).ok());
  {
    auto full = tx.reserve_many(0);  // full: returns at once all the same
    EXPECT_EQ(full.status(), SendStatus::kOk);
    EXPECT_EQ(full.size(), 0u);
  }
  rx.close();
  ASSERT_TRUE(tx.is_closed());
  auto expect_empty_ok = [&tx = tx](const leanchan::PermitBatch<int>& batch) {
    EXPECT_EQ(batch.status(), SendStatus::kOk);
    EXPECT_EQ(batch.size(), 0u);
    EXPECT_FALSE(batch);
    EXPECT_EQ(tx.strong_count(), 1u);  // an empty batch holds nothing
  };
  expect_empty_ok(tx.reserve_many(0));
  expect_empty_ok(tx.try_reserve_many(0));
  EXPECT_EQ(tx.reserve_many(1).status(), SendStatus::kClosed);
  EXPECT_EQ(tx.try_reserve_many(1).status(), SendStatus::kClosed);
  EXPECT_EQ(tx.reserve().status(), SendStatus::kClosed);
  EXPECT_EQ(tx.try_send(3).status(), SendStatus::kClosed);

  // The receiver gone: the same.
  auto [tx2, rx2] = leanchan::channel<int>(2);
  { auto gone = std::move(rx2); }
  ASSERT_TRUE(tx2.is_closed());
  EXPECT_EQ(tx2.reserve_many(0).status(), SendStatus::kOk);
  EXPECT_EQ(tx2.try_reserve_many(0).status(), SendStatus::kOk);
  EXPECT_EQ(tx2.reserve_many(1).status(), SendStatus::kClosed);
  EXPECT_EQ(tx2.try_reserve_many(1).status(), SendStatus::kClosed);
}

// A count no wait could satisfy is its own error, kExceedsCapacity, from
// both forms, at once, whatever the channel's state (Tokio: try_reserve_many
// says Full, reserve_many the error it gives for a closed channel).
TEST(TokioDifferences, ReserveManyAboveMaxCapacityIsExceedsCapacityNotFullOrClosed) {
  auto [tx, rx] = leanchan::channel<int>(4);
  const std::size_t counts[] = {
      5,
      (std::size_t{1} << 24) + 1,  // above kMaxCapacity
      (std::size_t{1} << 32) + 1,  // 1 if it were cut to 32 bits
      std::numeric_limits<std::size_t>::max(),
  };
  for (const std::size_t count : counts) {
    SCOPED_TRACE(count);
    EXPECT_EQ(tx.try_reserve_many(count).status(), SendStatus::kExceedsCapacity);
    EXPECT_EQ(tx.reserve_many(count).status(), SendStatus::kExceedsCapacity);
  }
  EXPECT_EQ(tx.capacity(), 4u);  // nothing was taken
  EXPECT_EQ(tx.strong_count(), 1u);
  {
    auto all = tx.try_reserve_many(tx.max_capacity());  // exactly the capacity: fine
    EXPECT_EQ(all.status(), SendStatus::kOk);
    EXPECT_EQ(all.size(), 4u);
    // Full now: one more than the capacity is still not kFull, and the
    // waiting form does not wait.
    EXPECT_EQ(tx.try_reserve_many(5).status(), SendStatus::kExceedsCapacity);
    EXPECT_EQ(tx.reserve_many(5).status(), SendStatus::kExceedsCapacity);
    EXPECT_EQ(tx.try_reserve_many(1).status(), SendStatus::kFull);
  }
  rx.close();
  // Closed: the count is checked first.
  EXPECT_EQ(tx.try_reserve_many(5).status(), SendStatus::kExceedsCapacity);
  EXPECT_EQ(tx.reserve_many(5).status(), SendStatus::kExceedsCapacity);
  EXPECT_EQ(tx.reserve_many(4).status(), SendStatus::kClosed);
}

// strong_count() is every handle that keeps the channel open: Senders, and
// live Permits and PermitBatches (a batch counts once, until its last slot
// is used or it goes). A permit does not borrow its Sender: it keeps the
// channel open, and lets a WeakSender upgrade, after every Sender is gone.
// (Tokio: a Permit borrows its Sender and does not count; an OwnedPermit
// holds the Sender it consumed.)
TEST(TokioDifferences, StrongCountCountsLivePermitsAndBatches) {
  auto [tx, rx] = leanchan::channel<int>(8);
  auto weak = tx.downgrade();
  EXPECT_EQ(tx.strong_count(), 1u);
  auto permit = tx.reserve();
  ASSERT_TRUE(permit);
  EXPECT_EQ(tx.strong_count(), 2u);
  auto batch = tx.try_reserve_many(3);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(tx.strong_count(), 3u);  // once for the batch, not once per slot
  batch.send(10);
  batch.send(11);
  EXPECT_EQ(tx.strong_count(), 3u);
  batch.send(12);  // the last slot: the batch is done
  EXPECT_EQ(tx.strong_count(), 2u);
  {
    auto unused = tx.try_reserve_many(2);
    EXPECT_EQ(tx.strong_count(), 3u);
  }  // dropped unused
  EXPECT_EQ(tx.strong_count(), 2u);
  EXPECT_EQ(tx.weak_count(), 1u);  // permits are not weak senders

  { auto gone = std::move(tx); }  // the last Sender; the permit remains
  EXPECT_FALSE(rx.is_closed());
  std::optional<leanchan::Sender<int>> upgraded = weak.upgrade();
  ASSERT_TRUE(upgraded.has_value());
  EXPECT_EQ(upgraded->strong_count(), 2u);  // the permit and the upgrade
  upgraded.reset();
  permit.send(13);
  EXPECT_FALSE(weak.upgrade().has_value());  // nothing keeps it open now
  EXPECT_TRUE(rx.is_closed());
  for (int expected = 10; expected <= 13; ++expected) EXPECT_EQ(rx.recv().value(), expected);
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kDisconnected);
}

// Only Sender has counts. In their place: a WeakSender upgrades and asks
// the Sender it gets (not counting itself); the Receiver asks is_closed()
// whether any sender is left, or keeps a WeakSender to upgrade.
TEST(TokioDifferences, WeakSenderAndReceiverHaveNoCountsUpgradeInstead) {
  using Sender = leanchan::Sender<int>;
  using WeakSender = leanchan::WeakSender<int>;
  using Receiver = leanchan::Receiver<int>;
  EXPECT_TRUE(HasStrongCount<Sender> && HasWeakCount<Sender>);  // the concepts work
  EXPECT_FALSE(HasStrongCount<WeakSender>);
  EXPECT_FALSE(HasWeakCount<WeakSender>);
  EXPECT_FALSE(HasSenderStrongCount<Receiver>);
  EXPECT_FALSE(HasSenderWeakCount<Receiver>);
  EXPECT_FALSE(HasStrongCount<Receiver>);
  EXPECT_FALSE(HasWeakCount<Receiver>);

  auto [tx, rx] = leanchan::channel<int>(4);
  auto copy = tx;
  WeakSender weak = tx.downgrade();  // kept by the receiver's side
  WeakSender weak2 = weak;
  auto counts = [&weak]() -> std::pair<std::size_t, std::size_t> {
    std::optional<Sender> sender = weak.upgrade();
    if (!sender) return {0, 0};
    return {sender->strong_count() - 1, sender->weak_count()};  // less the upgrade
  };
  EXPECT_EQ(counts(), (std::pair<std::size_t, std::size_t>{2, 2}));
  EXPECT_EQ(tx.strong_count(), 2u);  // the upgrade is gone again
  EXPECT_FALSE(rx.is_closed());
  { auto gone = std::move(copy); }
  EXPECT_EQ(counts(), (std::pair<std::size_t, std::size_t>{1, 2}));
  { auto gone = std::move(tx); }
  EXPECT_EQ(counts(), (std::pair<std::size_t, std::size_t>{0, 0}));  // no Sender to ask
  EXPECT_TRUE(rx.is_closed());                                       // no sender left
}

}  // namespace
