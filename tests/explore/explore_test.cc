// SPDX-License-Identifier: MIT
// The channel's own code, model-checked: each scenario runs under every
// schedule of its threads up to the preemption bound (explorer.h), and
// checks exactly-once delivery and destruction, FIFO per sender, the block
// bound, and that nobody waits forever (a deadlock fails the schedule).
// Linked against the explorer build of the library (ctest label: explore).
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <coroutine>
#include <cstdio>
#include <exception>
#include <memory_resource>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "coro_support.h"
#include "explorer.h"
#include "leanchan/channel.h"
#include "leanchan/internal/futex.h"
#include "reliability_scenarios.h"
#include "scenario_support.h"

namespace {

using leanchan::explore::check;
using leanchan::explore::join_all;
using leanchan::explore::spawn;
using leanchan::explore_test::Counted;
using leanchan::explore_test::Event;
using leanchan::explore_test::run_scenario;
using leanchan::explore_test::send_with_notifier;

// Two senders (one blocking, one try_send-first) and the receiver, across
// block boundaries: FIFO per sender, every message once, no deadlock, and
// never more than ceil(C/b) + 1 blocks.
// With Retention::kKeepNone, or with the receiver calling shrink_to_fit
// after every take, blocks are freed and the claim counter skips to a block
// boundary while senders claim: the same checks, and at the end only the
// control block is left.
template <std::size_t B>
void two_senders(std::size_t capacity, int per_sender,
                 leanchan::Retention retention = leanchan::Retention::kKeepOne,
                 bool shrink = false) {
  Counted::reset();
  {
    auto tx_rx = leanchan::channel<Counted, B>(
        capacity, retention);  // not bound: Clang 14 cannot capture a binding
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    const std::size_t b = std::min<std::size_t>(B, capacity);
    const std::size_t block_bytes = 16 + b * sizeof(Counted);
    const std::size_t bound = 64 + ((capacity + b - 1) / b + 1) * block_bytes;
    auto tx2 = tx;
    spawn([&tx, per_sender] {
      for (int i = 0; i < per_sender; ++i) check(tx.send(Counted(0, i)).ok(), "send failed");
    });
    spawn([&tx2, per_sender] {
      for (int i = 0; i < per_sender; ++i) {
        auto result = tx2.try_send(Counted(1, i));
        if (!result.ok()) check(tx2.send(std::move(result).value()).ok(), "send failed");
      }
    });
    int next[2] = {0, 0};
    for (int taken = 0; taken < 2 * per_sender; ++taken) {
      std::optional<Counted> message;
      if (taken % 2 == 0) {
        auto r = rx.try_recv();
        if (r.ok()) message.emplace(std::move(r).value());
      }
      if (!message) {
        if (auto r = rx.recv()) message.emplace(std::move(*r));
      }
      check(message.has_value(), "recv ended early");
      if (!message) break;
      check(message->seq == next[message->sender]++, "FIFO per sender violated");
      check(rx.memory_usage() <= bound, "more than ceil(C/b)+1 blocks live");
      if (shrink) (void)rx.shrink_to_fit();
    }
    join_all();
    if (retention == leanchan::Retention::kKeepNone || shrink) {
      check(rx.memory_usage() == 64, "a drained channel kept a block");
    }
  }
  check(Counted::live() == 0, "a message was leaked or destroyed twice");
}

// A receiver serving itself through its notifier (try_recv until empty,
// arm, wait for the callback) while a sender sends `messages` and goes:
// every message seen, in order, and the loop never waits forever.
template <std::size_t B>
void receive_notifier(std::size_t capacity, leanchan::Retention retention, int messages) {
  auto tx_rx =
      leanchan::channel<int, B>(capacity, retention);  // not bound: Clang 14 cannot capture it
  auto& rx = tx_rx.second;
  Event event;
  leanchan::Notifier notifier(&Event::fire, &event);
  rx.set_notifier(notifier);
  std::optional<leanchan::Sender<int, B>> sender(std::move(tx_rx.first));
  spawn([&sender, messages] {
    for (int i = 1; i <= messages; ++i) check(sender->send(int{i}).ok(), "send");
    sender.reset();
  });
  int received = 0;
  for (;;) {
    auto r = rx.try_recv();
    if (r.ok()) {
      check(r.value() == received + 1, "in order");
      ++received;
      continue;
    }
    if (r.status() == leanchan::RecvStatus::kDisconnected) break;
    event.reset();
    if (rx.arm_notifier()) continue;
    event.wait();
  }
  check(received == messages, "every message");
  rx.clear_notifier();
  join_all();
}

TEST(Explore, TwoSendersBlockSize1Capacity1) {
  run_scenario("2 senders, b=1, C=1", 2, [] { two_senders<1>(1, 1); });
}
TEST(Explore, TwoSendersBlockSize1Capacity2) {
  run_scenario("2 senders, b=1, C=2", 2, [] { two_senders<1>(2, 1); });
}
TEST(Explore, TwoSendersBlockSize2Capacity1) {
  run_scenario("2 senders, B=2, C=1", 2, [] { two_senders<2>(1, 1); });
}
TEST(Explore, TwoSendersBlockSize2Capacity2) {
  run_scenario("2 senders, b=2, C=2", 2, [] { two_senders<2>(2, 1); });
}
// Three messages each through two one-slot blocks: in-place reuse and the
// spare both happen.
TEST(Explore, RecyclingInPlaceAndTheSpare) {
  run_scenario("recycling, b=1, C=2, 2 each", 1, [] { two_senders<1>(2, 2); });
}

// Blocks from a resource that fails every other block allocation: a send
// that gets kNoMemory has claimed nothing and retries with the value it got
// back. Capacity 1 and one-slot blocks, keep-none: every message needs a
// new block, and a blocked send is completed by the receiver's hand-off,
// whose allocation may fail too (then the woken sender tries by itself).
class EveryOtherBlockFails : public std::pmr::memory_resource {
 public:
  explicit EveryOtherBlockFails(std::size_t block_bytes) : block_bytes_(block_bytes) {}
  int failures() const { return failures_.load(); }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes == block_bytes_ && blocks_.fetch_add(1) % 2 == 1) {
      failures_.fetch_add(1);
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
  std::size_t block_bytes_;
  std::atomic<int> blocks_{0};  // plain atomics: not scheduling points
  std::atomic<int> failures_{0};
};

void two_senders_failing_allocations() {
  Counted::reset();
  EveryOtherBlockFails resource(16 + sizeof(Counted));
  {
    auto tx_rx = leanchan::channel<Counted, 1>(
        1, leanchan::ChannelOptions{leanchan::Retention::kKeepNone, &resource});
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    auto tx2 = tx;
    spawn([&tx] {
      std::optional<Counted> value(std::in_place, 0, 0);
      for (;;) {
        auto result = tx.send(std::move(*value));
        if (result.ok()) break;
        check(result.status() == leanchan::SendStatus::kNoMemory, "send failed");
        value.emplace(std::move(result).value());
      }
    });
    spawn([&tx2] {
      std::optional<Counted> value(std::in_place, 1, 0);
      for (bool first = true;; first = false) {
        auto result = first ? tx2.try_send(std::move(*value)) : tx2.send(std::move(*value));
        if (result.ok()) break;
        check(result.status() == leanchan::SendStatus::kNoMemory ||
                  (first && result.status() == leanchan::SendStatus::kFull),
              "send failed");
        value.emplace(std::move(result).value());
      }
    });
    bool seen[2] = {false, false};
    for (int taken = 0; taken < 2; ++taken) {
      auto message = rx.recv();
      check(message.has_value(), "recv ended early");
      if (!message) break;
      check(!seen[message->sender], "a message arrived twice");
      seen[message->sender] = true;
    }
    join_all();
    // 64-byte control block + the resource pointer after it, no block.
    check(rx.memory_usage() == 64 + 8, "a drained keep-none channel kept a block");
  }
  check(Counted::live() == 0, "a message was leaked or destroyed twice");
}

TEST(Explore, AllocationFailuresWhileTwoSendersRace) {
  run_scenario("every other block allocation fails, 2 senders, b=1, C=1", 2,
               [] { two_senders_failing_allocations(); });
}

TEST(Explore, KeepNoneTwoSendersBlockSize2Capacity2) {
  run_scenario("keep-none, 2 senders, b=2, C=2", 2,
               [] { two_senders<2>(2, 1, leanchan::Retention::kKeepNone); });
}
// Retention::keep(2): spares chain behind the tail and in-place reuse comes
// first; three messages each through one-slot blocks.
TEST(Explore, KeepTwoRecyclingAndSpareChain) {
  run_scenario("keep(2), b=1, C=2, 2 each", 1,
               [] { two_senders<1>(2, 2, leanchan::Retention::keep(2)); });
}
TEST(Explore, ShrinkToFitRacingTwoSenders) {
  run_scenario("shrink_to_fit, 2 senders, b=2, C=2", 2,
               [] { two_senders<2>(2, 1, leanchan::Retention::kKeepOne, /*shrink=*/true); });
}

// A permit taken while a message is queued, sent by a thread after (or
// while) the receiver drains and frees every block; another sender races.
TEST(Explore, KeepNonePermitSentAfterTheDrain) {
  run_scenario("keep-none permit after drain", 2, [] {
    Counted::reset();
    {
      auto tx_rx = leanchan::channel<Counted, 2>(3, leanchan::Retention::kKeepNone);
      auto& tx = tx_rx.first;
      auto& rx = tx_rx.second;
      check(tx.send(Counted(0, 0)).ok(), "send");
      auto permit = tx.reserve();
      check(static_cast<bool>(permit), "reserve");
      auto tx2 = tx;
      spawn([&permit] { permit.send(Counted(0, 1)); });
      spawn([&tx2] { check(tx2.send(Counted(1, 0)).ok(), "send"); });
      int next[2] = {0, 0};
      for (int i = 0; i < 3; ++i) {
        auto m = rx.recv();
        check(m.has_value(), "a message");
        if (!m) break;
        check(m->seq == next[m->sender]++, "FIFO");
        (void)rx.shrink_to_fit();
      }
      join_all();
      check(rx.memory_usage() == 64, "drained");
    }
    check(Counted::live() == 0, "a message was leaked or destroyed twice");
  });
}

// The receiver goes right after a release jumped its index, while a sender
// sends and a permit is out: every message destroyed once.
TEST(Explore, KeepNoneReceiverDropAfterJump) {
  run_scenario("keep-none receiver drop after jump", 2, [] {
    Counted::reset();
    {
      auto tx_rx = leanchan::channel<Counted, 2>(3, leanchan::Retention::kKeepNone);
      auto& tx = tx_rx.first;
      check(tx.send(Counted(0, 0)).ok(), "send");
      auto permit = tx.reserve();
      std::optional<leanchan::Receiver<Counted, 2>> receiver(std::move(tx_rx.second));
      auto tx2 = tx;
      spawn([&permit] { permit.send(Counted(0, 1)); });
      spawn([&tx2] { (void)tx2.send(Counted(1, 0)); });
      spawn([&receiver] {
        (void)receiver->recv();  // index 0 -> 1, maybe the jump to 2
        receiver.reset();
      });
      join_all();
    }
    check(Counted::live() == 0, "a message was leaked or destroyed twice");
  });
}

// Receive notifier over a keep-none channel that frees its block each time.
TEST(Explore, KeepNoneReceiveNotifier) {
  run_scenario("keep-none receive notifier", 2,
               [] { receive_notifier<2>(2, leanchan::Retention::kKeepNone, 3); });
}

// close() racing a blocked send: the send either succeeds (its message is
// then delivered) or fails with kClosed (its value handed back); either
// way every message is destroyed once and nobody waits forever.
TEST(Explore, CloseRacingABlockedSend) {
  run_scenario("close vs blocked send", 2, [] {
    Counted::reset();
    {
      auto tx_rx =
          leanchan::channel<Counted, 1>(1);  // not bound: Clang 14 cannot capture a binding
      auto& tx = tx_rx.first;
      auto& rx = tx_rx.second;
      check(tx.try_send(Counted(0, 0)).ok(), "first send");
      bool sent = false;
      spawn([&tx, &sent] { sent = tx.send(Counted(0, 1)).ok(); });
      check(rx.recv().has_value(), "first message");
      rx.close();
      join_all();
      auto second = rx.try_recv();
      check(second.ok() == sent, "a send that succeeded must be delivered, and only then");
      check(rx.try_recv().status() == leanchan::RecvStatus::kDisconnected, "ends after close");
    }
    check(Counted::live() == 0, "a message was leaked or destroyed twice");
  });
}

// The last sender leaving while the receiver blocks in recv(): it wakes and
// sees the end.
TEST(Explore, LastSenderDropRacingABlockedRecv) {
  run_scenario("last sender drop vs blocked recv", 2, [] {
    auto [tx, rx] = leanchan::channel<int, 1>(1);
    std::optional<leanchan::Sender<int, 1>> sender(std::move(tx));
    spawn([&sender] {
      check(sender->send(7).ok(), "send");
      sender.reset();
    });
    check(rx.recv() == 7, "the message");
    check(!rx.recv().has_value(), "the end");
    join_all();
  });
}

// WeakSender::upgrade racing the last strong sender's drop: either the
// upgrade wins (and its message arrives) or it fails; the receiver sees
// the end either way.
TEST(Explore, WeakUpgradeRacingTheLastDrop) {
  run_scenario("weak upgrade vs last drop", 2, [] {
    auto [tx, rx] = leanchan::channel<int, 1>(2);
    auto weak = tx.downgrade();
    std::optional<leanchan::Sender<int, 1>> strong(std::move(tx));
    bool upgraded = false;
    spawn([&strong] { strong.reset(); });
    spawn([&weak, &upgraded] {
      if (auto sender = weak.upgrade()) {
        upgraded = true;
        check(sender->send(1).ok(), "send through the upgrade");
      }
    });
    const std::optional<int> first = rx.recv();
    join_all();
    check(first.has_value() == upgraded, "the upgraded sender's message, and only that");
    check(!rx.recv().has_value(), "the end");
  });
}

// The receiver goes while messages are queued and a permit is out: every
// message (queued, or sent later through the permit) is destroyed once.
TEST(Explore, ReceiverDropWithQueuedMessagesAndAPermit) {
  run_scenario("receiver drop, queued + permit", 2, [] {
    Counted::reset();
    {
      auto [tx, rx] = leanchan::channel<Counted, 1>(3);
      check(tx.send(Counted(0, 0)).ok(), "send");
      auto permit = tx.reserve();
      check(static_cast<bool>(permit), "reserve");
      std::optional<leanchan::Receiver<Counted, 1>> receiver(std::move(rx));
      spawn([&permit] { permit.send(Counted(0, 1)); });
      spawn([&receiver] { receiver.reset(); });
      join_all();
    }
    check(Counted::live() == 0, "a message was leaked or destroyed twice");
  });
}

// The receiver goes (freeing the blocks no permit needs, as shrink_to_fit
// does) while a sender sends and a permit is out, under the default
// retention: every message, queued or sent after the drop, is destroyed
// once, and a send after the drop reports kClosed with its value back.
TEST(Explore, ReceiverDropFreeingBlocksWhileASenderSends) {
  run_scenario("receiver drop frees blocks vs a send and a permit", 2, [] {
    Counted::reset();
    {
      auto tx_rx = leanchan::channel<Counted, 2>(4);
      auto& tx = tx_rx.first;
      check(tx.send(Counted(0, 0)).ok(), "send");
      check(tx.send(Counted(0, 1)).ok(), "send");
      auto permit = tx.reserve();
      check(static_cast<bool>(permit), "reserve");
      std::optional<leanchan::Receiver<Counted, 2>> receiver(std::move(tx_rx.second));
      auto tx2 = tx;
      spawn([&permit] { permit.send(Counted(0, 2)); });
      spawn([&tx2] {
        auto result = tx2.send(Counted(1, 0));
        check(result.ok() || result.status() == leanchan::SendStatus::kClosed, "sent or closed");
      });
      spawn([&receiver] {
        (void)receiver->recv();
        receiver.reset();
      });
      join_all();
    }
    check(Counted::live() == 0, "a message was leaked or destroyed twice");
  });
}

// Two send notifiers queue while the receiver frees slots: each is handed
// one (FIFO), redeems it, and nobody is stranded.
TEST(Explore, TwoSendNotifiersArmingWhileTheReceiverTakes) {
  run_scenario("2 send notifiers vs receiver", 2, [] {
    auto [tx, rx] = leanchan::channel<int, 1>(1);
    check(tx.try_send(0).ok(), "fill");
    auto tx1 = tx;
    auto tx2 = tx;
    spawn([&] { send_with_notifier(tx1, 1); });
    spawn([&] { send_with_notifier(tx2, 2); });
    int sum = 0;
    for (int i = 0; i < 3; ++i) {
      auto value = rx.recv();
      check(value.has_value(), "a message");
      sum += value.value_or(100);
    }
    join_all();
    check(sum == 3, "each message once");
    check(tx.capacity() == 1, "every slot came back");
  });
}

// The receiver's batched give-backs: with 4-slot blocks its first three
// takes of a block are only counted in the block's header. A blocked send
// and a send notifier queue on the full channel (each raising the want bit
// and collecting what is owed, under the lock) while the receiver takes two
// messages mid-block and then waits for both senders: whichever comes
// first, the two slots reach them (a slot left counted in the header until
// the block's end would never come: the receiver takes nothing more until
// they are done), and at the end every permit is back.
TEST(Explore, WaitersAndMidBlockTakes) {
  run_scenario("blocked send + send notifier vs mid-block takes, b=4, C=4", 2, [] {
    auto tx_rx = leanchan::channel<int, 4>(4);  // not bound: Clang 14 cannot capture a binding
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    for (int i = 0; i < 4; ++i) check(tx.try_send(int{i}).ok(), "fill");
    auto tx1 = tx;
    auto tx2 = tx;
    spawn([&tx1] { check(tx1.send(10).ok(), "blocked send"); });
    spawn([&tx2] { send_with_notifier(tx2, 20); });
    int sum = 0;
    auto take = [&rx, &sum] {
      auto value = rx.recv();
      check(value.has_value(), "a message");
      sum += value.value_or(1000);
    };
    take();
    take();
    join_all();
    for (int i = 0; i < 4; ++i) take();
    check(sum == 0 + 1 + 2 + 3 + 10 + 20, "each message once");
    check(tx.capacity() == 4, "every slot came back");
  });
}

// A send notifier's callback runs on the thread that frees its slot: here
// only the receiver frees slots, so only the receiver may run it. A sender
// that collects the receiver's owed permits while another waits must leave
// them to the receiver (whose takes see the want bit): handing them over
// itself would run the notifier's callback on that sender's thread.
struct FiredOn {
  Event event;
  std::thread::id receiver = std::this_thread::get_id();
  std::atomic<bool> elsewhere{false};
  static void fire(void* self) {
    auto* fired = static_cast<FiredOn*>(self);
    if (std::this_thread::get_id() != fired->receiver) fired->elsewhere.store(true);
    Event::fire(&fired->event);
  }
};

TEST(Explore, SendNotifierFiresOnTheReceiversThread) {
  run_scenario("send notifier fired by the receiver only, b=4, C=4", 2, [] {
    auto [tx, rx] = leanchan::channel<int, 4>(4);
    for (int i = 0; i < 4; ++i) check(tx.try_send(int{i}).ok(), "fill");
    auto tx1 = tx;
    auto tx2 = tx;
    FiredOn fired;
    spawn([&tx1] { check(tx1.send(10).ok(), "blocked send"); });
    spawn([&tx2, &fired] {
      leanchan::Notifier notifier(&FiredOn::fire, &fired);
      send_with_notifier(tx2, 20, notifier, fired.event);
    });
    int sum = 0;
    for (int i = 0; i < 6; ++i) sum += rx.recv().value_or(1000);
    join_all();
    check(sum == 0 + 1 + 2 + 3 + 10 + 20, "each message once");
    check(!fired.elsewhere.load(), "a send notifier fired on a sender's thread");
  });
}

// The last sender goes while the receiver owes the permits of its takes
// (2 of a 4-slot block): the receiver must see the end, not sleep forever,
// whichever order the drop, the takes and the end check run in.
TEST(Explore, LastSenderDropWhileTakesAreOwed) {
  run_scenario("last sender drop vs owed takes, b=4, C=4", 2, [] {
    auto tx_rx = leanchan::channel<int, 4>(4);  // not bound: Clang 14 cannot capture a binding
    auto& rx = tx_rx.second;
    std::optional<leanchan::Sender<int, 4>> sender(std::move(tx_rx.first));
    spawn([&sender] {
      check(sender->send(1).ok(), "send");
      check(sender->try_send(2).ok(), "try_send");
      sender.reset();
    });
    int sum = 0;
    while (auto value = rx.recv()) sum += *value;
    join_all();
    check(sum == 3, "both messages, then the end");
  });
}

// A woken send waiter that is cancelled passes its slot on.
TEST(Explore, WokenSendWaiterCancelled) {
  run_scenario("woken waiter cancelled", 2, [] {
    auto [tx, rx] = leanchan::channel<int, 1>(1);
    check(tx.try_send(0).ok(), "fill");
    Event first_event;
    leanchan::Notifier first(&Event::fire, &first_event);
    check(tx.notify_when_room(first) == leanchan::RoomStatus::kArmed, "first queues");
    auto tx2 = tx;
    spawn([&tx2] { send_with_notifier(tx2, 2); });
    check(rx.recv() == 0, "the first message");  // its slot goes to `first`
    tx.cancel_notify(first);                     // and on to the thread
    check(rx.recv() == 2, "the thread's message");
    join_all();
    check(tx.capacity() == 1, "every slot came back");
  });
}

// The receive notifier: arm, fire, re-arm, disarm, against a sender; every
// message is seen and the drain loop never waits forever.
TEST(Explore, ReceiveNotifierArmFireRearm) {
  run_scenario("receive notifier", 2,
               [] { receive_notifier<1>(2, leanchan::Retention::kKeepOne, 2); });
}

// A coroutine started on one thread suspends in async_send on a full
// channel while the receiver frees a slot and the executor's thread resumes
// it: once await_suspend has armed, the coroutine may be resumed (and its
// frame freed) at any moment, and the starting thread must touch nothing of
// it. The frame frees itself when the coroutine ends.
leanchan::testing::Detached send_in_coroutine(leanchan::Sender<int, 1>& tx,
                                              leanchan::Executor& executor,
                                              leanchan::internal::Atomic<std::uint32_t>& finished,
                                              leanchan::explore_test::ExploreExecutor& loop) {
  auto result = co_await tx.async_send(5, executor);
  check(result.ok(), "async_send");
  finished.store(1);
  loop.poke();
}

TEST(Explore, CoroutineStartedOffTheExecutor) {
  run_scenario("async_send started off the executor", 2, [] {
    leanchan::explore_test::ExploreExecutor executor;
    leanchan::internal::Atomic<std::uint32_t> finished{0};
    auto tx_rx = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
    auto& tx = tx_rx.first;
    auto& rx = tx_rx.second;
    check(tx.try_send(1).ok(), "fill");
    spawn([&] { executor.run_until([&] { return finished.load() != 0; }); });
    spawn([&rx] {
      check(rx.recv() == 1, "first");
      check(rx.recv() == 5, "the coroutine's message");
    });
    send_in_coroutine(tx, executor, finished, executor).handle.resume();  // on this thread
    join_all();
  });
}

// The receiver's give-back at a block's end racing a send that provides.
TEST(Explore, FinishBlockRacingAProvidingSend) {
  run_scenario("finish_block racing provide", 2,
               [] { leanchan::explore_test::finish_block_racing_a_providing_send(); });
}

// A notifier's slot given back after close ends the channel for an armed
// receiver.
TEST(Explore, CancelAfterCloseWakesTheReceiver) {
  run_scenario("cancel after close", 2,
               [] { leanchan::explore_test::cancel_after_close_wakes_the_receiver(); });
}

// The want bit on a block the receiver renumbered in place, while a
// reservation and a blocked send wait (bound 1: at 2 the scenario passes
// the explorer's schedule budget).
TEST(Explore, WantBitOnARenumberedBlock) {
  run_scenario("want bit on a renumbered block", 1,
               [] { leanchan::explore_test::want_bit_on_a_renumbered_block(); });
}

// A cancelled send notifier, then give-backs that must find bit 1 clear.
TEST(Explore, CancelledNotifierThenGiveBack) {
  run_scenario("cancelled notifier, then give-back", 2,
               [] { leanchan::explore_test::cancelled_notifier_then_give_back(); });
}

// A one-CAS send racing the release of a drained keep-none list.
TEST(Explore, FastSendRacingARelease) {
  run_scenario("fast send racing a release", 2,
               [] { leanchan::explore_test::fast_send_racing_a_release(); });
}

// A one-CAS send racing the receiver's un-numbering of unused blocks.
TEST(Explore, FastSendRacingAnUnnumbering) {
  run_scenario("fast send racing an unnumbering", 2,
               [] { leanchan::explore_test::fast_send_racing_an_unnumbering(); });
}

// A one-CAS send whose word comes back to the same value meanwhile.
TEST(Explore, FastSendPushesAReservation) {
  run_scenario("fast send pushes a reservation", 2,
               [] { leanchan::explore_test::fast_send_pushes_a_reservation(); });
}

// A one-CAS send that numbers its block without a permit, racing a
// release of the drained keep-none list.
TEST(Explore, FastSendProvidesRacingARelease) {
  run_scenario("fast send provides racing a release", 2,
               [] { leanchan::explore_test::fast_send_provides_racing_a_release(); });
}

// The same with a reservation held throughout (the word's bit 3 set).
TEST(Explore, FastSendPushesAReservationWhileOneIsHeld) {
  run_scenario("fast send pushes a reservation while one is held", 2,
               [] { leanchan::explore_test::fast_send_pushes_a_reservation_while_one_is_held(); });
}

// A one-CAS send whose word comes back after an un-numbering.
TEST(Explore, FastSendPushesAReservationPastAnUnnumbering) {
  run_scenario("fast send pushes a reservation past an unnumbering", 2, [] {
    leanchan::explore_test::fast_send_pushes_a_reservation_past_an_unnumbering();
  });
}

// A send notifier destroyed as soon as its redeeming try_send returns.
TEST(Explore, RedeemedNotifierGoesAtOnce) {
  run_scenario("redeemed notifier goes at once", 2,
               [] { leanchan::explore_test::redeemed_notifier_goes_at_once(); });
}

// A redeem or re-arm of a send notifier whose hand-off close withdraws.
TEST(Explore, RedeemRacingAWithdrawnHandOff) {
  run_scenario("redeem racing a withdrawn hand-off", 2,
               [] { leanchan::explore_test::redeem_racing_a_withdrawn_hand_off(); });
}

// The last sender's drop racing a hand-off to its queued send notifier.
TEST(Explore, LastSenderRacingAHandOff) {
  run_scenario("last sender racing a hand-off", 2,
               [] { leanchan::explore_test::last_sender_racing_a_hand_off(); });
}

// A SendNotifier's carried value pushed by the receiver while the last
// sender goes.
TEST(Explore, CarriedSendRacingTheLastSender) {
  run_scenario("carried send racing the last sender", 2,
               [] { leanchan::explore_test::carried_send_racing_the_last_sender(); });
}

// A hand-off to a SendNotifier racing close, the owner looking or
// withdrawing.
TEST(Explore, CarriedSendRacingClose) {
  run_scenario("carried send racing close, the owner looking", 2,
               [] { leanchan::explore_test::carried_send_racing_close(false); });
  run_scenario("carried send racing close, the owner withdrawing", 2,
               [] { leanchan::explore_test::carried_send_racing_close(true); });
}

// A reservation's provisioning check racing an un-numbering.
TEST(Explore, ReservationRacingAnUnnumbering) {
  run_scenario("reservation racing an unnumbering", 2,
               [] { leanchan::explore_test::reservation_racing_an_unnumbering(); });
}

// A send into a block numbered past the senders' block racing the
// retirement of the senders' block.
TEST(Explore, SendPastTheSendersBlockRacingItsRetirement) {
  run_scenario("send past the senders' block racing its retirement", 2,
               [] { leanchan::explore_test::send_past_the_senders_block_racing_its_retirement(); });
}

// Two budget charges racing each other and a refund (MemoryBudget).
TEST(Explore, BudgetChargeRacingARefund) {
  run_scenario("budget charge racing a refund", 2,
               [] { leanchan::explore_test::budget_charge_racing_a_refund(); });
}

}  // namespace
