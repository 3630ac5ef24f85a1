// SPDX-License-Identifier: MIT
// Windows of a few instructions in the waiting layer, exercised
// deterministically: a test point (leanchan/internal/test_point.h) holds one
// thread exactly there while the test drives the others. Linked against the
// test-points build of the library.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "leanchan/channel.h"
#include "leanchan/internal/test_point.h"

namespace {

using leanchan::internal::TestPoint;

// Holds the one thread that calls arm() when it reaches `point`, until
// release(). Other threads and points pass through.
class Hold {
 public:
  explicit Hold(TestPoint point) {
    point_ = point;
    reached_ = false;
    released_ = false;
    leanchan::internal::test_point_hook.store(&Hold::hook);
  }
  ~Hold() {
    release();
    leanchan::internal::test_point_hook.store(nullptr);
  }
  static void arm_this_thread() { target_ = std::this_thread::get_id(); }
  static void wait_reached() { reached_.wait(false); }
  static void release() {
    released_ = true;
    released_.notify_all();
  }

 private:
  static void hook(TestPoint point) {
    if (point != point_ || std::this_thread::get_id() != target_.load()) return;
    reached_ = true;
    reached_.notify_all();
    released_.wait(false);
  }
  static inline TestPoint point_;
  static inline std::atomic<std::thread::id> target_;
  static inline std::atomic<bool> reached_{false};
  static inline std::atomic<bool> released_{false};
};

struct Counted {
  static void fire(void* self) { static_cast<Counted*>(self)->calls.fetch_add(1); }
  std::atomic<int> calls{0};
  leanchan::Notifier notifier{&Counted::fire, this};
};

// Starts a thread that drops `held` (a Permit or a PermitBatch: its slots
// go back, one handed to the queued waiter) and is held at the test point;
// returns once it is there.
template <class Held>
std::thread drop_and_hold(Held held) {
  std::thread dropper([h = std::move(held)]() mutable {
    Hold::arm_this_thread();
    { auto gone = std::move(h); }
  });
  Hold::wait_reached();
  return dropper;
}

// close() while the thread dropping the last permit is held at a hand-off:
// close() sets the closed bit, then waits for the lock the held thread
// has; released once the bit is set, the hand-off is withdrawn. The
// waiter is woken once, without a slot, and the channel ends.
template <class Tx, class Rx>
void close_while_held_then_check(Tx& tx, Rx& rx, std::thread& dropper, Counted& waiter) {
  std::thread releaser([sender = tx]() mutable {
    while (!sender.is_closed()) std::this_thread::yield();  // close() has set its bit
    Hold::release();
  });
  rx.close();
  releaser.join();
  dropper.join();
  EXPECT_EQ(waiter.calls.load(), 1);  // woken, by close, without a slot
  EXPECT_EQ(tx.try_send(1, waiter.notifier).status(), leanchan::SendStatus::kClosed);
  EXPECT_EQ(tx.capacity(), 1u);
  EXPECT_EQ(rx.try_recv().status(), leanchan::RecvStatus::kDisconnected);
}

// Whether `status` is set within 10 s: a bound, not a synchronization (the
// fixed redeems return at once; the old ones waited for the held thread).
bool set_soon(const std::atomic<int>& status) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (status.load() < 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  return status.load() >= 0;
}

// Two send notifiers arm while the receiver frees two slots. The first is
// held right after it queued (before its arming call returns): both must
// still fire, one per slot. (The first waiting layer counted armed
// notifiers outside the critical section that linked them: a release in
// this window spent the other notifier's count, and it was never fired.)
TEST(Window, SendNotifierHeldAfterQueueingDoesNotStrandTheNext) {
  Hold hold(TestPoint::kSendNotifierQueued);
  auto [tx, rx] = leanchan::channel<int, 1>(2);
  ASSERT_TRUE(tx.try_send(0).ok());
  ASSERT_TRUE(tx.try_send(1).ok());
  Counted first, second;
  std::thread arming([sender = tx, &first]() mutable {
    Hold::arm_this_thread();
    EXPECT_EQ(sender.notify_when_room(first.notifier), leanchan::RoomStatus::kArmed);
  });
  Hold::wait_reached();
  ASSERT_EQ(tx.notify_when_room(second.notifier), leanchan::RoomStatus::kArmed);
  ASSERT_TRUE(rx.try_recv().ok());
  ASSERT_TRUE(rx.try_recv().ok());
  EXPECT_EQ(first.calls.load(), 1);
  EXPECT_EQ(second.calls.load(), 1) << "the second notifier was stranded";
  Hold::release();
  arming.join();
  // Both hold a slot; giving them back frees the channel.
  EXPECT_FALSE(tx.cancel_notify(first.notifier));
  EXPECT_FALSE(tx.cancel_notify(second.notifier));
  EXPECT_EQ(tx.capacity(), 2u);
}

// A timed send whose deadline passes just as the slot is handed to it keeps
// the slot (the send succeeds): the slot is neither lost nor given to the
// waiter behind it, which is served by the next slot.
TEST(Window, TimedSendGrantedAsItTimesOutUsesItsSlot) {
  Hold hold(TestPoint::kThreadWaiterTimedOut);
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(0).ok());
  leanchan::SendStatus status = leanchan::SendStatus::kFull;
  std::thread timed([sender = tx, &status]() mutable {
    Hold::arm_this_thread();
    status = sender.send_for(7, std::chrono::milliseconds(1)).status();
  });
  Hold::wait_reached();  // queued, timed out, not yet out of the queue
  Counted behind;
  ASSERT_EQ(tx.notify_when_room(behind.notifier),
            leanchan::RoomStatus::kArmed);  // queued behind it
  ASSERT_EQ(rx.try_recv().value(), 0);      // the slot goes to the timed sender
  EXPECT_EQ(behind.calls.load(), 0);
  Hold::release();
  timed.join();
  EXPECT_EQ(status, leanchan::SendStatus::kOk);
  EXPECT_EQ(rx.try_recv().value(), 7);
  EXPECT_EQ(behind.calls.load(), 1);  // the next slot is its
  EXPECT_TRUE(tx.try_send(8, behind.notifier).ok());
  EXPECT_EQ(rx.try_recv().value(), 8);
  EXPECT_EQ(tx.capacity(), 1u);
}

// A hand-off decided under the lock while close() runs: close() sets the
// closed bit first and then waits for the lock. The hand-off takes effect
// only when the permit word records it, after the close: it is withdrawn,
// and the waiter is woken without a slot. No send succeeds after close().
TEST(Window, HandOffRacingCloseIsWithdrawn) {
  Hold hold(TestPoint::kHandOffDecided);
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  auto permit = tx.reserve();
  ASSERT_TRUE(permit);
  Counted waiter;
  ASSERT_EQ(tx.notify_when_room(waiter.notifier), leanchan::RoomStatus::kArmed);
  std::thread dropper = drop_and_hold(std::move(permit));  // decided, not yet recorded
  close_while_held_then_check(tx, rx, dropper, waiter);
}

// The owner redeems while a hand-off to its notifier is decided but not yet
// recorded in the permit word. The grant is not shown until then, so the
// redeem finds the channel full at once, and the close that follows
// withdraws the hand-off cleanly. (The grant used to be shown when
// decided: the redeem took the slot and waited for the firing; a close
// before the record withdrew the same slot, counting it twice, and reset
// the owner's awaited firing, so the owner slept for good.)
TEST(Window, RedeemBeforeTheHandOffIsRecordedFindsNoSlot) {
  Hold hold(TestPoint::kHandOffDecided);
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  auto permit = tx.reserve();
  ASSERT_TRUE(permit);
  Counted waiter;
  ASSERT_EQ(tx.notify_when_room(waiter.notifier), leanchan::RoomStatus::kArmed);
  std::thread dropper = drop_and_hold(std::move(permit));  // decided, not yet recorded
  std::atomic<int> status{-1};
  std::thread owner([sender = tx, &waiter, &status]() mutable {
    status = static_cast<int>(sender.try_send(1, waiter.notifier).status());
  });
  if (!set_soon(status)) {
    ADD_FAILURE() << "the redeem took a grant not yet recorded and waits for the firing";
    Hold::release();  // no close: the firing ends and wakes it
    owner.join();
    dropper.join();
    return;
  }
  owner.join();
  EXPECT_EQ(status.load(), static_cast<int>(leanchan::SendStatus::kFull));
  close_while_held_then_check(tx, rx, dropper, waiter);
}

// The hand-off recorded in the permit word, the grant not shown yet, and a
// second slot freed with it gone to the free count: a redeem there must
// not send without the notifier. It used to find no grant and take the
// free slot with a plain send (kOk), leaving the notifier firing and
// about to hold a grant nobody would redeem, and free to go while its
// callback ran. It reports kFull now; the grant is redeemed next.
TEST(Window, RedeemWhileTheGrantIsNotShownYetDoesNotSendAround) {
  Hold hold(TestPoint::kHandOffRecorded);
  auto [tx, rx] = leanchan::channel<int, 1>(2);
  auto batch = tx.reserve_many(2);
  ASSERT_EQ(batch.status(), leanchan::SendStatus::kOk);
  Counted waiter;
  ASSERT_EQ(tx.notify_when_room(waiter.notifier), leanchan::RoomStatus::kArmed);
  // Two slots: one to the waiter, one free. Held, it has the list lock.
  std::thread dropper = drop_and_hold(std::move(batch));
  std::atomic<int> send_status{-1};
  std::atomic<int> reserve_status{-1};
  std::thread owner([sender = tx, &waiter, &send_status, &reserve_status]() mutable {
    send_status = static_cast<int>(sender.try_send(1, waiter.notifier).status());
    reserve_status = static_cast<int>(sender.try_reserve(waiter.notifier).status());
  });
  EXPECT_TRUE(set_soon(reserve_status)) << "the redeem sent without the notifier (and waits "
                                           "for the list lock the hand-off holds)";
  Hold::release();
  owner.join();
  dropper.join();
  EXPECT_EQ(send_status.load(), static_cast<int>(leanchan::SendStatus::kFull));
  EXPECT_EQ(reserve_status.load(), static_cast<int>(leanchan::SendStatus::kFull));
  EXPECT_EQ(waiter.calls.load(), 1);
  EXPECT_TRUE(tx.try_send(2, waiter.notifier).ok());  // its grant
  EXPECT_TRUE(tx.try_send(3).ok());                   // the free slot
  EXPECT_EQ(rx.try_recv().value(), 2);
  EXPECT_EQ(rx.try_recv().value(), 3);
  EXPECT_EQ(tx.capacity(), 2u);
}

}  // namespace
