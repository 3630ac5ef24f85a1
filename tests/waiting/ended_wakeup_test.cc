// SPDX-License-Identifier: MIT
// The end of a closed channel is never missed: when the last slot held by a
// sender comes back after close(), whatever holds it (a cancelled send
// notifier, a destroyed coroutine awaitable, a Permit, a PermitBatch,
// permits whose block could not be allocated), the receiver's armed
// notifier is called, as it is for the last message or the last sender.
// (Tokio's test of the same: cancelled_reserve_wakes_closed_receiver.)
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <utility>

#include "leanchan/channel.h"

namespace {

using leanchan::Notifier;
using leanchan::RecvStatus;

std::atomic<int> g_receiver_calls{0};
void on_receiver(void*) noexcept {
  g_receiver_calls.fetch_add(1);
}
void on_sender(void*) noexcept {}

// Closes the channel with `holds` still holding the only slot, arms the
// receiver's notifier (false: not ended, a slot is held), runs `give_back`,
// and checks that the notifier was called and the end is seen.
template <class Rx, class GiveBack>
void expect_end_wakes_receiver(Rx& rx, GiveBack give_back) {
  g_receiver_calls = 0;
  rx.close();
  Notifier notifier{&on_receiver, nullptr};
  rx.set_notifier(notifier);
  ASSERT_FALSE(rx.arm_notifier()) << "a held slot keeps the channel from ending";
  ASSERT_EQ(g_receiver_calls.load(), 0);
  give_back();
  EXPECT_EQ(g_receiver_calls.load(), 1) << "the armed receiver was not told of the end";
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kDisconnected);
  rx.clear_notifier();
}

TEST(EndedWakeup, CancellingANotifierThatHoldsTheLastSlotWakesTheReceiver) {
  auto channel = leanchan::channel<int, 8>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  Notifier tx_notifier{&on_sender, nullptr};
  {
    auto permit = tx.try_reserve();
    ASSERT_TRUE(permit);
    ASSERT_EQ(tx.notify_when_room(tx_notifier), leanchan::RoomStatus::kArmed);
  }  // the dropped permit's slot is handed to the notifier
  expect_end_wakes_receiver(rx, [&] { EXPECT_FALSE(tx.cancel_notify(tx_notifier)); });
}

TEST(EndedWakeup, DroppingAPermitWakesTheReceiver) {
  auto channel = leanchan::channel<int, 8>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  auto permit = tx.try_reserve();
  ASSERT_TRUE(permit);
  expect_end_wakes_receiver(rx, [&] { auto dropped = std::move(permit); });
}

TEST(EndedWakeup, DroppingAPartlyUsedBatchWakesTheReceiver) {
  auto channel = leanchan::channel<int, 8>(4);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  auto batch = tx.try_reserve_many(3);
  ASSERT_EQ(batch.size(), 3u);
  batch.send(1);
  ASSERT_EQ(rx.try_recv().value(), 1);
  expect_end_wakes_receiver(rx, [&] { auto dropped = std::move(batch); });
}

// A coroutine's reserve awaitable, handed the slot while suspended, then
// destroyed without resuming (its frame went away).
TEST(EndedWakeup, DestroyingAnAwaitableThatHoldsTheLastSlotWakesTheReceiver) {
  auto channel = leanchan::channel<int, 8>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  leanchan::ManualExecutor executor;
  auto permit = tx.try_reserve();
  ASSERT_TRUE(permit);
  struct Suspended {  // an awaitable is not movable: made in place
    Suspended(leanchan::Sender<int, 8>& tx, leanchan::Executor& executor)
        : awaitable(tx.async_reserve(executor)) {}
    leanchan::ReserveAwaitable<int, 8> awaitable;
  };
  auto suspended = std::make_unique<Suspended>(tx, executor);
  ASSERT_FALSE(suspended->awaitable.await_ready());
  ASSERT_TRUE(suspended->awaitable.await_suspend(std::noop_coroutine()));
  { auto dropped = std::move(permit); }  // the slot goes to the awaitable
  expect_end_wakes_receiver(rx, [&] { suspended.reset(); });
}

// A memory resource whose next allocation runs `before_failing` and fails.
class FailingResource : public std::pmr::memory_resource {
 public:
  void (*before_failing)(void*) = nullptr;
  void* context = nullptr;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (before_failing != nullptr) {
      auto* action = std::exchange(before_failing, nullptr);
      action(context);
      throw std::bad_alloc();
    }
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

// The receiver closes the channel and arms its notifier from inside the
// channel's failing block allocation; `armed` records whether it armed
// (arm_notifier returns true, armed nothing, when the channel has ended).
struct CloseInsideAFailingAllocation {
  using Rx = leanchan::Receiver<int, 8>;
  FailingResource resource;  // declared first: outlives the channel
  std::pair<leanchan::Sender<int, 8>, Rx> channel =
      leanchan::channel<int, 8>(1, leanchan::ChannelOptions{.memory = &resource});
  Notifier notifier{&on_receiver, nullptr};
  inline static bool armed = false;

  CloseInsideAFailingAllocation() {
    channel.second.set_notifier(notifier);
    g_receiver_calls = 0;
    armed = false;
    resource.context = &channel.second;
    resource.before_failing = [](void* context) {
      auto& receiver = *static_cast<Rx*>(context);
      receiver.close();
      armed = !receiver.arm_notifier();
    };
  }
  ~CloseInsideAFailingAllocation() { channel.second.clear_notifier(); }
};

// A reservation's permit is counted, its block cannot be allocated; the
// receiver closed and armed meanwhile (from inside the failing
// allocation): the permit going back with kNoMemory ends the channel.
TEST(EndedWakeup, PermitsGivenBackForNoMemoryWakeTheReceiver) {
  CloseInsideAFailingAllocation test;
  EXPECT_FALSE(static_cast<bool>(test.channel.first.try_reserve()));
  EXPECT_EQ(test.resource.before_failing, nullptr) << "the allocation was not reached";
  EXPECT_TRUE(CloseInsideAFailingAllocation::armed) << "the failing permit was not counted";
  EXPECT_EQ(g_receiver_calls.load(), 1) << "the armed receiver was not told of the end";
  EXPECT_EQ(test.channel.second.try_recv().status(), RecvStatus::kDisconnected);
}

// A send that finds its block unnumbered numbers it before it takes a
// permit (the one-CAS send): a receiver that closes from inside the
// failing allocation finds the channel ended at once, and the send fails
// with kNoMemory, its value back.
TEST(EndedWakeup, ASendNumberingItsBlockHoldsNoPermit) {
  CloseInsideAFailingAllocation test;
  auto result = test.channel.first.try_send(7);
  EXPECT_EQ(result.status(), leanchan::SendStatus::kNoMemory);
  EXPECT_EQ(result.value(), 7);
  EXPECT_EQ(test.resource.before_failing, nullptr) << "the allocation was not reached";
  EXPECT_FALSE(CloseInsideAFailingAllocation::armed)
      << "a permit is counted for a block being numbered";
  EXPECT_EQ(g_receiver_calls.load(), 0) << "the notifier was never armed";
  EXPECT_EQ(test.channel.second.try_recv().status(), RecvStatus::kDisconnected);
}

// The last sender goes while a send notifier is queued: nobody can redeem
// or cancel it any more (both need a Sender, and a WeakSender cannot come
// back). It is fired without a slot, as on close, so the slot the receiver
// frees is not handed to it, and the receiver sees the end. (The slot used
// to go to the notifier, and the channel never ended: recv() slept and
// try_recv() said kEmpty for good.)
TEST(EndedWakeup, TheLastSenderGoingWithItsNotifierQueuedEndsTheChannel) {
  auto [tx, rx] = leanchan::channel<int, 1>(1);
  ASSERT_TRUE(tx.try_send(1).ok());
  std::atomic<int> sender_calls{0};
  Notifier notifier{
      [](void* calls) noexcept { static_cast<std::atomic<int>*>(calls)->fetch_add(1); },
      &sender_calls};
  ASSERT_EQ(tx.notify_when_room(notifier), leanchan::RoomStatus::kArmed);
  { auto gone = std::move(tx); }
  EXPECT_EQ(sender_calls.load(), 1) << "fired, without a slot, as the last sender went";
  EXPECT_EQ(rx.try_recv().value(), 1);
  EXPECT_EQ(rx.try_recv().status(), RecvStatus::kDisconnected);
  EXPECT_EQ(sender_calls.load(), 1);
}

}  // namespace

// The last sender goes while send notifiers hold slots they were handed and
// did not redeem (against the notifier contract): nothing can redeem or
// cancel them any more, so the drop gives those slots back itself, and the
// receiver, armed, is told of the end once it has taken what is queued.
// (The slots used to stay in use for good: try_recv() said kEmpty and
// recv() slept.)
TEST(EndedWakeup, TheLastSenderGivesBackTheSlotsItsNotifiersHold) {
  auto [tx, rx] = leanchan::channel<int, 1>(3);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(tx.try_send(i).ok());
  Notifier first{&on_sender, nullptr};
  // `second` ends still showing its slot: never destroyed (debug builds
  // assert there, where the misuse shows).
  alignas(Notifier) unsigned char second_storage[sizeof(Notifier)];
  Notifier& second = *::new (second_storage) Notifier{&on_sender, nullptr};
  ASSERT_EQ(tx.notify_when_room(first), leanchan::RoomStatus::kArmed);
  ASSERT_EQ(tx.notify_when_room(second), leanchan::RoomStatus::kArmed);
  EXPECT_EQ(rx.try_recv().value(), 1);  // its slot goes to `first`
  EXPECT_EQ(rx.try_recv().value(), 2);  // and this one to `second`
  ASSERT_EQ(tx.notify_when_room(first), leanchan::RoomStatus::kHoldsSlot);
  ASSERT_EQ(tx.notify_when_room(second), leanchan::RoomStatus::kHoldsSlot);
  ASSERT_TRUE(tx.try_send(4, first).ok());  // `first` redeems; `second` never does
  g_receiver_calls = 0;
  Notifier receiver{&on_receiver, nullptr};
  rx.set_notifier(receiver);
  ASSERT_TRUE(rx.arm_notifier()) << "messages are queued";
  EXPECT_EQ(rx.try_recv().value(), 3);
  EXPECT_EQ(rx.try_recv().value(), 4);
  ASSERT_FALSE(rx.arm_notifier()) << "senders are left: not ended";
  { auto gone = std::move(tx); }
  EXPECT_EQ(g_receiver_calls.load(), 1) << "the armed receiver was not told of the end";
  ASSERT_EQ(rx.try_recv().status(), RecvStatus::kDisconnected);
  EXPECT_FALSE(rx.recv().has_value());  // (would sleep for good before)
  rx.clear_notifier();
}
