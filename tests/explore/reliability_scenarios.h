// SPDX-License-Identifier: MIT
// tests/explore/reliability_scenarios.h: scenarios shared by the explorer's
// test (explore_test.cc) and its self-test (mutants_test.cc, which runs them
// against the defect each one guards against).
#ifndef LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_
#define LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_

#include "explorer.h"
#include "leanchan/channel.h"
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

}  // namespace leanchan::explore_test

#endif  // LEANCHAN_TESTS_EXPLORE_RELIABILITY_SCENARIOS_H_
