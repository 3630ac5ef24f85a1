// SPDX-License-Identifier: MIT
// tests/explore/reliability_scenarios.h: scenarios shared by the explorer's
// test (explore_test.cc) and its self-test (mutants_test.cc, which runs them
// against the defect each one guards against).
#ifndef LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_
#define LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_

#include <cstddef>
#include <memory>
#include <optional>

#include "explorer.h"
#include "leanchan/channel.h"
#include "leanchan/memory_budget.h"
#include "scenario_support.h"

namespace leanchan::explore_test {

// The receiver finishes block 0 (finish_block) while a third send
// provides its block and a reservation is held (so that a block numbered
// in excess cannot be given back at the drain). Whatever the schedule,
// the numbered blocks reach no further than block 1 (positions 0..3):
// with the receiver at position 3 and the channel found empty, one block
// is live (64 + 16 + 2 * 4 bytes). Before, a send providing between the
// published position and the permits going back numbered block 2 too.
inline void finish_block_racing_a_providing_send() {
  constexpr std::size_t kOneBlock = 64 + 16 + 2 * sizeof(int);
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "fill block 0");
  auto permit = tx.try_reserve();
  explore::check(static_cast<bool>(permit), "reserve position 2 or 3");
  auto tx2 = tx;
  explore::spawn([&tx2] { explore::check(tx2.try_send(2).ok(), "the third send"); });
  explore::check(rx.recv() == 0 && rx.recv() == 1 && rx.recv() == 2, "FIFO");
  explore::join_all();
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == kOneBlock, "a block numbered that no position needs");
  permit.send(3);
  explore::check(rx.recv() == 3, "the reserved message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty again");
  explore::check(rx.memory_usage() == kOneBlock, "one block after the drain");
}

// A send notifier holds the only slot; the receiver closes, arms its
// notifier and waits for the end while another thread cancels the
// notifier, which gives the slot back and ends the channel: the receiver
// must be woken (the explorer reports a schedule where every thread
// sleeps).
inline void cancel_after_close_wakes_the_receiver() {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  auto permit = tx.try_reserve();
  explore::check(static_cast<bool>(permit), "reserve the only slot");
  Event tx_event;
  Notifier tx_notifier(&Event::fire, &tx_event);
  explore::check(tx.notify_when_room(tx_notifier) == RoomStatus::kArmed, "queued");
  { auto dropped = std::move(permit); }  // the slot is handed to the notifier
  explore::spawn([&tx, &tx_notifier] { (void)tx.cancel_notify(tx_notifier); });
  rx.close();
  Event rx_event;
  Notifier rx_notifier(&Event::fire, &rx_event);
  rx.set_notifier(rx_notifier);
  for (;;) {
    rx_event.reset();
    if (rx.poll_recv().status() == PollStatus::kDisconnected) break;
    if (!rx.arm_notifier()) rx_event.wait();
  }
  explore::join_all();
  rx.clear_notifier();
}

// Three keep-none channels share a budget with room for their control
// blocks and two blocks; channel A holds one. A's receiver drains it (its
// block is refunded) while B's and C's senders race for the room: one
// block's worth at first, two once the refund lands. Whatever the
// schedule: the bytes held never pass the limit, the room there is never
// refused, a refused send hands its value back and is told apart as the
// budget's refusal, the count ends exactly at what the channels hold, and
// a refused sender gets its block once memory comes back. A charge that
// checks and then adds lets both sends in before the refund (mutant 5); a
// refund that is not one RMW loses a charge made between its load and its
// store (mutant 6).
inline void budget_charge_racing_a_refund() {
  constexpr std::size_t kControl = 72;              // 64 + the resource pointer
  constexpr std::size_t kBlock = 16 + sizeof(int);  // one slot
  constexpr std::size_t kLimit = 3 * kControl + 2 * kBlock;
  ScenarioBudget scenario_budget(kLimit);  // before the channels: it outlives them
  MemoryBudget& budget = scenario_budget.get();
  const ChannelOptions options{.retention = Retention::kKeepNone, .memory = &budget};
  auto a = leanchan::channel<int, 1>(1, options);  // not bound: Clang 14 cannot capture a binding
  auto b = leanchan::channel<int, 1>(1, options);
  auto c = leanchan::channel<int, 1>(1, options);
  explore::check(a.first.try_send(0).ok(), "A's block fits");
  explore::check(budget.held() == kLimit - kBlock, "room for one block");
  // One send on a full budget: true if sent; else the value came back and
  // the budget says it refused this thread.
  auto send = [&budget](Sender<int, 1>& tx, int value) {
    auto result = tx.try_send(value);
    if (result.ok()) return true;
    explore::check(result.status() == SendStatus::kNoMemory, "refused as no memory");
    explore::check(std::move(result).value() == value, "the refused value comes back");
    explore::check(budget.refused_on_this_thread(), "told apart as the budget's refusal");
    return false;
  };
  explore::spawn([&a] { explore::check(a.second.try_recv().value() == 0, "A's message"); });
  bool b_sent = false;
  explore::spawn([&] { b_sent = send(b.first, 1); });
  const bool c_sent = send(c.first, 2);
  explore::join_all();
  const auto figures = budget.figures();
  explore::check(figures.high_water <= kLimit, "the limit was exceeded");
  explore::check(b_sent || c_sent, "both refused with room for a block");
  const std::size_t held = 3 * kControl + kBlock * (std::size_t{b_sent} + std::size_t{c_sent});
  explore::check(figures.held == held, "the bytes held drifted from the channels'");
  explore::check(
      figures.held == a.second.memory_usage() + b.second.memory_usage() + c.second.memory_usage(),
      "the budget disagrees with memory_usage()");
  // Recovery: once the messages sent are taken, a refused sender gets its
  // block.
  if (b_sent) explore::check(b.second.try_recv().value() == 1, "B's message");
  if (c_sent) explore::check(c.second.try_recv().value() == 2, "C's message");
  if (!b_sent) {
    explore::check(b.first.try_send(1).ok() && b.second.try_recv().value() == 1, "B recovers");
  }
  if (!c_sent) {
    explore::check(c.first.try_send(2).ok() && c.second.try_recv().value() == 2, "C recovers");
  }
  explore::check(budget.held() == 3 * kControl, "every block refunded");
}

// The want bit on the block the receiver renumbers in place when it
// finishes it (BlockList::finish_block_locked, b > 1): a reservation of
// two queues first and a blocking send behind it. The reservation is
// completed at block 0's end, when block 0 is renumbered in place as
// block 1 while the send still waits; it sends one message and holds its
// second slot until the send is done. The receiver's take of that message
// must give its permit back at once, which the want bit on the renumbered
// block tells it: counted in the block's header until the block's end, the
// permit would never come back (the block's second slot is the held
// reservation's), and every thread would wait (a deadlock).
inline void want_bit_on_a_renumbered_block() {
  auto channel = leanchan::channel<int, 2>(2);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "fill block 0");
  auto tx1 = tx;
  auto tx2 = tx;
  Event sent;
  explore::spawn([&tx1, &sent] {
    auto batch = tx1.reserve_many(2);
    explore::check(static_cast<bool>(batch), "reserve two");
    batch.send(10);
    sent.wait();  // the blocked send is done
    batch.send(11);
  });
  explore::spawn([&tx2, &sent] {
    explore::check(tx2.send(30).ok(), "the blocked send");
    Event::fire(&sent);
  });
  int sum = 0;
  for (int i = 0; i < 5; ++i) sum += rx.recv().value_or(1000);
  explore::join_all();
  explore::check(sum == 0 + 1 + 10 + 11 + 30, "each message once");
  explore::check(tx.capacity() == 2, "every slot came back");
}

// A send notifier redeemed while its callback is still returning: the
// owner waits for room the way sender.h documents, redeems with
// try_send(value, notifier) and lets the notifier go at once. The redeem
// must not return before the firing is over (the callback returned and
// the channel is done with the node), or the firer would write into a
// notifier that is gone. The callback counts itself in and out around
// telling its owner.
struct CountedCallback {
  static void fire(void* self) {
    auto* counted = static_cast<CountedCallback*>(self);
    counted->entered.fetch_add(1);
    Event::fire(&counted->event);
    counted->returned.fetch_add(1);
  }
  Event event;
  internal::Atomic<std::uint32_t> entered{0};
  internal::Atomic<std::uint32_t> returned{0};
};

// A fast send (one CAS: ChannelOps::try_push_fast) racing the release of a
// drained keep-none list whose receiver stands at a block boundary with
// the next block numbered (for a reservation since dropped): the send
// checks the blocks before its CAS, and the release frees them. The
// release moves the claim position even at a boundary, so the send's CAS
// fails and it looks again; before, the word could stay as it was and
// the send claimed a position in a freed block.
inline void fast_send_racing_a_release() {
  auto [tx, rx] = leanchan::channel<int, 2>(3, leanchan::Retention::kKeepNone);
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "fill block 0");
  {
    auto permit = tx.try_reserve();  // numbers block 1 for position 2
    explore::check(static_cast<bool>(permit), "reserve");
    explore::check(rx.recv() == 0 && rx.recv() == 1, "FIFO");  // block 0 goes
  }  // the permit goes back unused: block 1 stays numbered, nothing in use
  auto tx2 = tx;
  explore::spawn([&tx2] { explore::check(tx2.try_send(2).ok(), "the fast send"); });
  auto first = rx.try_recv();  // empty or 2; finding it empty releases block 1
  explore::join_all();
  explore::check(first.ok() ? first.value() == 2 : rx.recv() == 2, "the fast send's message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == 64, "drained");
}

// A fast send racing the receiver's un-numbering of blocks provided for a
// reservation since dropped (found empty, BlockList::
// unnumber_past_head_locked), which leaves the permit word as it is: the
// only position the send can claim then is the receiver's index, in the
// head block, which stays. One block is live at the end (64 + 16 + 2 * 4).
inline void fast_send_racing_an_unnumbering() {
  constexpr std::size_t kOneBlock = 64 + 16 + 2 * sizeof(int);
  auto [tx, rx] = leanchan::channel<int, 2>(4);
  explore::check(tx.try_send(0).ok(), "send");
  {
    auto batch = tx.try_reserve_many(3);  // numbers block 1 for positions up to 3
    explore::check(static_cast<bool>(batch), "reserve");
  }
  explore::check(rx.recv() == 0, "the first message");
  auto tx2 = tx;
  explore::spawn([&tx2] {
    explore::check(tx2.try_send(1).ok(), "the first fast send");   // position 1, block 0
    explore::check(tx2.try_send(2).ok(), "the second fast send");  // position 2, block 1
  });
  auto first = rx.try_recv();  // empty or 1; finding it empty un-numbers block 1
  explore::join_all();
  explore::check(first.ok() ? first.value() == 1 : rx.recv() == 1, "the first message");
  explore::check(rx.recv() == 2, "the second message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == kOneBlock, "one block after the drain");
}

// A fast send between its check and its CAS while the permit word goes
// away and comes back to the same value: a reservation takes a slot, a
// second one finds the channel full and collects the slot the receiver
// took (the returned position moves on), and is about to take it. The
// send's claim then pushes the first reservation one position on: the
// send must have counted it in the blocks it checked, from the word alone
// (Provisioning::last_position_bound_with); a bound from the returned
// position read beside the word misses it, and the reservation claims a
// position past every numbered block. Two-slot blocks, capacity 2.
inline void fast_send_pushes_a_reservation() {
  auto tx_rx = leanchan::channel<int, 2>(2);  // no structured binding: a lambda captures both
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "fill block 0");
  explore::check(rx.recv() == 0 && rx.recv() == 1, "drain it (renumbered as block 1)");
  explore::check(tx.try_send(2).ok(), "position 2");
  auto tx2 = tx;
  bool fast_sent = false;
  bool second_reserved = false;
  explore::spawn([&tx2, &fast_sent] { fast_sent = tx2.try_send(3).ok(); });
  explore::spawn([&tx, &rx, &second_reserved] {
    explore::check(rx.recv() == 2, "position 2's message");
    auto first = tx.try_reserve();
    explore::check(static_cast<bool>(first), "the first reservation");
    auto second = tx.try_reserve();  // full: collects the slot of message 2
    second_reserved = static_cast<bool>(second);
    first.send(4);
    if (second) second.send(5);
  });
  explore::join_all();
  int seen = 0;
  for (auto m = rx.try_recv(); m.ok(); m = rx.try_recv()) {
    const int v = m.value();
    explore::check(v >= 3 && v <= 5 && (seen & (1 << v)) == 0, "each message once");
    seen |= 1 << v;
  }
  const int expected = (fast_sent ? 1 << 3 : 0) | 1 << 4 | (second_reserved ? 1 << 5 : 0);
  explore::check(seen == expected, "every message sent arrives");
}

// A fast send that finds its block unnumbered and numbers it without a
// permit (Provisioning::provide_next), racing the receiver, which finds
// the channel empty and, under Retention::kKeepNone, frees every block
// again: the send's second CAS must look at the list again (a release
// moves the claim position, so a send that looked before it fails its
// CAS). Nothing is left at the end but the control block.
inline void fast_send_provides_racing_a_release() {
  auto [tx, rx] = leanchan::channel<int, 2>(3, leanchan::Retention::kKeepNone);
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "fill block 0");
  explore::check(rx.recv() == 0 && rx.recv() == 1, "drain it: every block goes");
  explore::check(rx.memory_usage() == 64, "nothing numbered");
  auto tx2 = tx;
  explore::spawn([&tx2] { explore::check(tx2.try_send(2).ok(), "the providing send"); });
  auto first = rx.try_recv();  // empty or 2; finding it empty frees what the send numbered
  explore::join_all();
  explore::check(first.ok() ? first.value() == 2 : rx.recv() == 2, "the send's message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == 64, "drained");
}

// fast_send_pushes_a_reservation with a reservation held throughout, so
// that the permit word's bit 3 (a permit may wait to claim) is set before
// the send looks and stays set: the word then comes back to the same
// value, bit 3 included, and only the loose bound from the word alone
// (the claim's slot plus the slots in use, within the claim's block) is
// safe. Four-slot blocks, capacity 4: the send claims position 2, the
// reservation it pushes on position 4, past the one numbered block.
inline void fast_send_pushes_a_reservation_while_one_is_held() {
  auto tx_rx = leanchan::channel<int, 4>(4);  // no structured binding: a lambda captures both
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  auto held = tx.try_reserve();  // a permit still to claim: bit 3 set
  explore::check(static_cast<bool>(held), "the held reservation");
  explore::check(tx.try_send(0).ok() && tx.try_send(1).ok(), "positions 0 and 1");
  auto tx2 = tx;
  bool fast_sent = false;
  bool first_reserved = false;
  bool second_reserved = false;
  explore::spawn([&tx2, &fast_sent] { fast_sent = tx2.try_send(2).ok(); });
  explore::spawn([&tx, &rx, &first_reserved, &second_reserved] {
    explore::check(rx.recv() == 0, "position 0's message (owed)");
    auto first = tx.try_reserve();
    auto second = tx.try_reserve();  // full: collects message 0's slot if nobody did
    first_reserved = static_cast<bool>(first);
    second_reserved = static_cast<bool>(second);
    if (first) first.send(4);
    if (second) second.send(5);
  });
  explore::join_all();
  held.send(3);
  int seen = 0;
  for (auto m = rx.try_recv(); m.ok(); m = rx.try_recv()) {
    const int v = m.value();
    explore::check(v >= 1 && v <= 5 && (seen & (1 << v)) == 0, "each message once");
    seen |= 1 << v;
  }
  const int expected = 1 << 1 | 1 << 3 | (fast_sent ? 1 << 2 : 0) | (first_reserved ? 1 << 4 : 0) |
                       (second_reserved ? 1 << 5 : 0);
  explore::check(seen == expected, "every message sent arrives");
  explore::check(fast_sent || first_reserved, "a free slot was taken");
}

// A fast send between its check and its CAS while the receiver
// un-numbers the block after its own (provided for a reservation since
// dropped; the word does not change) and then gives back what it owed,
// and a new reservation takes a slot: the word is as the send read it.
// The send's claim pushes the reservation one position on, into the block
// that went: the one-CAS claim must keep its bound in the claim's own
// block, which the un-numbering keeps. Two-slot blocks, capacity 4.
inline void fast_send_pushes_a_reservation_past_an_unnumbering() {
  auto tx_rx = leanchan::channel<int, 2>(4);  // no structured binding: a lambda captures both
  auto& tx = tx_rx.first;
  auto& rx = tx_rx.second;
  explore::check(tx.try_send(0).ok(), "position 0");
  explore::check(rx.recv() == 0, "its message (owed, not given back)");
  {
    auto batch = tx.try_reserve_many(2);  // numbers block 1
    explore::check(static_cast<bool>(batch), "reserve");
  }  // goes back unused: block 1 stays numbered until the channel is found empty
  auto tx2 = tx;
  bool fast_sent = false;
  bool taken_early = false;
  explore::spawn([&tx2, &fast_sent] { fast_sent = tx2.try_send(1).ok(); });
  explore::spawn([&tx, &rx, &taken_early] {
    auto first = rx.try_recv();  // empty or 1; finding it empty un-numbers block 1
    taken_early = first.ok();
    explore::check(!first.ok() || first.value() == 1, "the fast send's message");
    auto permit = tx.try_reserve();
    explore::check(static_cast<bool>(permit), "the reservation");
    permit.send(2);
  });
  explore::join_all();
  int seen = taken_early ? 1 << 1 : 0;
  for (auto m = rx.try_recv(); m.ok(); m = rx.try_recv()) {
    const int v = m.value();
    explore::check(v >= 1 && v <= 2 && (seen & (1 << v)) == 0, "each message once");
    seen |= 1 << v;
  }
  explore::check(seen == ((fast_sent ? 1 << 1 : 0) | 1 << 2), "every message sent arrives");
}

inline void redeemed_notifier_goes_at_once() {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  explore::check(tx.try_send(0).ok(), "fill");
  auto tx2 = tx;
  explore::spawn([&tx2] {
    CountedCallback counted;
    Notifier notifier(&CountedCallback::fire, &counted);
    int value = 1;
    for (;;) {
      auto result = tx2.try_send(std::move(value), notifier);
      if (result.ok()) break;
      value = std::move(result).value();
      counted.event.reset();
      if (tx2.notify_when_room(notifier) != RoomStatus::kArmed) continue;
      counted.event.wait();
    }
    explore::check(counted.returned.load() == counted.entered.load(),
                   "a redeem returned while the notifier's callback still ran");
  });
  explore::check(rx.recv() == 0 && rx.recv() == 1, "FIFO");
  explore::join_all();
}

// A dropped permit's slot is handed to a queued send notifier while the
// receiver closes and the notifier's owner redeems it or arms again. The
// hand-off takes effect at the permit word's settle, and a close before
// that withdraws it: the grant must not be seen (and redeemed) before. The
// defect: a redeem in that window took the slot the withdrawal also gave
// back (counted twice), and an owner awaiting the firing was put back to
// plain firing by the withdrawal and never woken (every thread sleeps).
inline void redeem_racing_a_withdrawn_hand_off() {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  auto permit = tx.try_reserve();
  explore::check(static_cast<bool>(permit), "reserve the only slot");
  Event event;
  Notifier notifier(&Event::fire, &event);
  explore::check(tx.notify_when_room(notifier) == RoomStatus::kArmed, "queued");
  auto* held = &permit;
  explore::spawn([held] { auto gone = std::move(*held); });  // handed to the notifier
  explore::spawn([&rx] { rx.close(); });
  bool sent = tx.try_send(1, notifier).ok();
  if (!sent) {
    const RoomStatus room = tx.notify_when_room(notifier);
    if (room == RoomStatus::kHoldsSlot) {
      sent = tx.try_send(1, notifier).ok();
      explore::check(sent, "a slot held is redeemed");
    }
  }
  explore::join_all();
  (void)tx.cancel_notify(notifier);  // an armed or unredeemed notifier leaves
  int received = 0;
  while (rx.try_recv().ok()) ++received;
  explore::check(received == (sent ? 1 : 0), "the redeemed message arrives once");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kDisconnected,
                 "closed, drained: ended");
  explore::check(tx.capacity() == 1, "the slot counted once");
}

// A send notifier queued on a full one-slot channel is cancelled while a
// blocking send may be queueing behind it (cancel_notify's settlement of
// nothing is what clears bit 1 if the queue is then empty); then the
// receiver takes both messages, and each take's give-back must hand the
// slot to the blocked send or to the free count. A settlement that trusted
// an empty queue alone would keep a stale bit 1: the last send, finding
// "senders wait", could not take the free slot.
inline void cancelled_notifier_then_give_back() {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  explore::check(tx.try_send(0).ok(), "fill the only slot");
  Event event;
  Notifier notifier(&Event::fire, &event);
  explore::check(tx.notify_when_room(notifier) == RoomStatus::kArmed, "the notifier queues");
  auto tx2 = tx;
  explore::spawn([&tx2] { explore::check(tx2.send(2).ok(), "the blocking send"); });
  // The slot stays full until the first take below: nothing can have
  // fired the notifier, so the cancel finds it queued.
  explore::check(tx.cancel_notify(notifier), "the cancel finds the notifier queued");
  explore::check(rx.recv() == 0 && rx.recv() == 2, "FIFO, each message once");
  explore::check(event.fired.load() == 0, "a cancelled notifier never fires");
  explore::join_all();
  explore::check(tx.try_send(3).ok(), "the slot is free again");
  explore::check(rx.recv() == 3, "the last message");
}

// The last sender goes (another thread) while the receiver's take frees
// the only slot, a send notifier queued for it: the take's hand-off gives
// the notifier the slot before the drop's close (the drop then gives it
// back, as nothing can redeem it), or the close fires the notifier without
// one first. Either way the receiver, asleep in recv() at once after its
// take, wakes to the end, and the slot is free.
inline void last_sender_racing_a_hand_off() {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& rx = channel.second;
  explore::check(channel.first.try_send(0).ok(), "fill the only slot");
  Event event;
  // Never destroyed: it may end showing the slot the drop gave back (a
  // misuse that debug builds report at its destruction).
  alignas(Notifier) unsigned char storage[sizeof(Notifier)];
  Notifier& notifier = *::new (storage) Notifier(&Event::fire, &event);
  explore::check(channel.first.notify_when_room(notifier) == RoomStatus::kArmed, "queued");
  auto* last = &channel.first;
  explore::spawn([last] { auto gone = std::move(*last); });
  explore::check(rx.recv() == 0, "the queued message");
  explore::check(!rx.recv().has_value(), "the end, with the notifier's slot given back");
  explore::join_all();
  explore::check(event.fired.load() == 1, "the notifier fired once, with or without a slot");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kDisconnected, "ended");
}

// A SendNotifier carrying a value is queued on a full one-slot channel by
// the only Sender, which then goes (on another thread) while the receiver
// takes the message before it, handing the freed slot to the notifier: the
// receiver's push of the carried value races the last sender's end, which
// gives back the slots handed out and unclaimed. Either the push keeps
// sending open long enough to put the value in (it arrives before the
// end), or the end came first and nothing is pushed; never a position
// claimed on an ended channel (the explorer's slot checks), a message lost
// or the receiver left waiting.
inline void carried_send_racing_the_last_sender() {
  auto channel = leanchan::channel<std::unique_ptr<int>, 1>(1);  // not bound: Clang 14
  auto& rx = channel.second;
  explore::check(channel.first.try_send(std::make_unique<int>(0)).ok(), "fill the only slot");
  Event event;
  // Never destroyed: without a Sender its owner cannot take a grant it may
  // end up holding (as last_sender_racing_a_hand_off's notifier).
  alignas(SendNotifier) unsigned char storage[sizeof(SendNotifier)];
  SendNotifier& notifier = *::new (storage) SendNotifier(&Event::fire, &event);
  auto value = std::make_unique<int>(1);
  explore::check(channel.first.send_or_notify(value, notifier) == SendStatus::kFull, "queued");
  auto* last = &channel.first;
  explore::spawn([last] { auto gone = std::move(*last); });
  auto first = rx.recv();
  explore::check(first.has_value() && **first == 0, "the queued message");
  int carried = 0;
  while (auto next = rx.recv()) {
    explore::check(*next != nullptr && **next == 1, "the carried value");
    ++carried;
  }
  explore::join_all();
  explore::check(carried == (value == nullptr ? 1 : 0), "the carried value arrives iff it went");
  explore::check(event.fired.load() == 1, "the notifier fired once");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kDisconnected, "ended");
}

// A permit's drop hands its slot to a queued SendNotifier while the
// receiver closes the channel and the owner looks (send_or_notify) or
// withdraws (cancel_notify). The value goes in at most once, and exactly
// when the owner is told so; a close that withdraws the hand-off fires
// the notifier without sending.
inline void carried_send_racing_close(bool withdraw) {
  auto channel = leanchan::channel<int, 1>(1);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  auto permit = tx.try_reserve();
  explore::check(static_cast<bool>(permit), "reserve the only slot");
  Event event;
  SendNotifier notifier(&Event::fire, &event);
  int value = 1;
  explore::check(tx.send_or_notify(value, notifier) == SendStatus::kFull, "queued");
  auto* held = &permit;
  explore::spawn([held] { auto gone = std::move(*held); });  // handed to the notifier
  explore::spawn([&rx] { rx.close(); });
  bool sent = false;
  if (withdraw) {
    sent = tx.cancel_notify(notifier);
  } else {
    for (;;) {
      const SendStatus status = tx.send_or_notify(value, notifier);
      if (status != SendStatus::kFull) {
        sent = status == SendStatus::kOk;
        break;
      }
      event.wait();  // fired by the hand-off or the close
      event.reset();
    }
  }
  explore::join_all();
  if (withdraw) sent = tx.cancel_notify(notifier) || sent;  // a hand-off after the withdrawal
  int received = 0;
  while (rx.try_recv().ok()) ++received;
  explore::check(received == (sent ? 1 : 0), "the value arrives once, exactly when told");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kDisconnected,
                 "closed, drained: ended");
  explore::check(tx.capacity() == 1, "the slot counted once");
}

// A reservation whose provisioning check (BlockList::covers) races the
// receiver's un-numbering of a block provided for a reservation since
// dropped (found empty: BlockList::unnumber_past_head_locked). The check
// reads the list word, then the last numbered tag; the un-numbering reads
// the permits in use, then lowers that tag. Whatever the interleaving the
// reservation's two sends find their blocks numbered (block 1 numbered
// again under the lock if it went), and one block is live at the end
// (64 + 16 + 2 * 4).
inline void reservation_racing_an_unnumbering() {
  constexpr std::size_t kOneBlock = 64 + 16 + 2 * sizeof(int);
  auto channel = leanchan::channel<int, 2>(4);  // not bound: Clang 14 cannot capture a binding
  auto& rx = channel.second;
  explore::check(channel.first.try_send(0).ok(), "send");
  {
    auto batch = channel.first.try_reserve_many(3);  // numbers block 1 for positions up to 3
    explore::check(static_cast<bool>(batch), "reserve");
  }  // dropped unused: block 1 stays numbered, nothing in use
  explore::check(rx.recv() == 0, "the first message");
  auto tx2 = channel.first;
  explore::spawn([&tx2] {
    auto batch = tx2.try_reserve_many(2);  // positions 1 and 2: blocks 0 and 1
    explore::check(static_cast<bool>(batch), "the racing reservation");
    batch.send(1);
    batch.send(2);
  });
  auto first = rx.try_recv();  // empty or 1; finding it empty may un-number block 1
  explore::join_all();
  explore::check(first.ok() ? first.value() == 1 : rx.recv() == 1, "the first message");
  explore::check(rx.recv() == 2, "the second message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == kOneBlock, "one block after the drain");
}

// A reservation holds block 1 numbered past the senders' block (block 0)
// while the receiver takes block 0's two messages and retires it; the
// reservation's send, which claims in block 1, opens it before or after
// that retirement. Retiring the senders' block must move the senders'
// block on to its successor: the send then finds block 1 by the seqlock
// read or one step under the lock, never through the retired block (a
// spare by then: Retention::kKeepOne keeps one while messages flow).
// Every message arrives in order; one block is live at the end, the spare
// freed when the receiver finds the channel empty (64 + 16 + 2 * 4).
inline void send_past_the_senders_block_racing_its_retirement() {
  constexpr std::size_t kBlock = 16 + 2 * sizeof(int);
  auto channel = leanchan::channel<int, 2>(4);  // not bound: Clang 14 cannot capture a binding
  auto& tx = channel.first;
  auto& rx = channel.second;
  explore::check(tx.try_send(0).ok(), "position 0");
  auto batch = tx.try_reserve_many(2);  // numbers block 1 for position 2 (and 3)
  explore::check(static_cast<bool>(batch), "reserve");
  explore::check(tx.try_send(1).ok(), "position 1: block 0 is full");
  explore::spawn([&batch] { batch.send(2); });  // position 2, in block 1
  explore::check(rx.recv() == 0 && rx.recv() == 1, "block 0's messages: it is retired");
  explore::check(rx.recv() == 2, "the reservation's first message");
  explore::join_all();
  batch.send(3);
  explore::check(rx.recv() == 3, "the reservation's second message");
  explore::check(rx.try_recv().status() == leanchan::RecvStatus::kEmpty, "found empty");
  explore::check(rx.memory_usage() == 64 + kBlock, "one block after the drain");
}

}  // namespace leanchan::explore_test

#endif  // LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_
