// SPDX-License-Identifier: MIT
// The explorer finds real bugs: each test re-introduces, in the explorer
// build only, a defect of the kind found in the first waiting layer, and
// passes when the explorer reports it with a schedule (ctest label:
// explore-mutants).
#include <gtest/gtest.h>

#include <cstdio>
#include <utility>

#include "explorer.h"
#include "leanchan/channel.h"
#include "reliability_scenarios.h"
#include "scenario_support.h"

namespace {

using leanchan::explore::check;
using leanchan::explore::join_all;
using leanchan::explore::spawn;
using leanchan::explore_test::explore_with_env;

void expect_caught(const char* name, const leanchan::explore::Result& result) {
  std::printf("[explore-mutant] %s: %s\n", name, result.summary().c_str());
  EXPECT_FALSE(result.ok) << "the explorer missed the defect: " << result.summary();
  EXPECT_FALSE(result.trace.empty());
}

// Both defects live in the lock-free release (ChannelState::release_permits),
// which an unused permit's drop takes; the receiver gives its permits back
// under the list lock, so the scenarios free the slot by dropping a permit.

// Defect 1: a send notifier is linked under the lock but its waiting bit
// is set after the lock is released. A release in between frees the slot
// to the count instead of handing it over: the notifier is never fired.
TEST(ExploreMutant, NotifierAnnouncedOutsideTheCriticalSection) {
  expect_caught("waiting bit set outside the lock",
                explore_with_env(
                    [] {
                      auto [tx, rx] = leanchan::channel<int, 1>(1);
                      auto permit = tx.try_reserve();
                      check(static_cast<bool>(permit), "reserve the only slot");
                      auto tx2 = tx;
                      spawn([&tx2] { leanchan::explore_test::send_with_notifier(tx2, 1); });
                      { auto dropped = std::move(permit); }  // the slot goes back unused
                      check(rx.recv() == 1, "the notifier's send");
                      join_all();
                    },
                    1));
}

// Defect 2: a release checks the waiting bit and then subtracts in a
// second step. A sender that queues in between is never handed the slot:
// it sleeps forever with room in the channel.
TEST(ExploreMutant, ReleaseMissesAWaiterAnnouncingAtTheSameMoment) {
  expect_caught("release checks then subtracts",
                explore_with_env(
                    [] {
                      auto [tx, rx] = leanchan::channel<int, 1>(1);
                      auto permit = tx.try_reserve();
                      check(static_cast<bool>(permit), "reserve the only slot");
                      auto tx2 = tx;
                      spawn([&tx2] { check(tx2.send(1).ok(), "send"); });
                      { auto dropped = std::move(permit); }  // the slot goes back unused
                      check(rx.recv() == 1, "the blocked send");
                      join_all();
                    },
                    2));
}

// Defect 3: finish_block publishes the receiver's position and unlocks
// before the block's permits go back: a send providing in between counts
// them twice and numbers a block no message uses.
TEST(ExploreMutant, FinishBlockGivesBackAfterTheUnlock) {
  expect_caught(
      "finish_block gives back after the unlock",
      explore_with_env([] { leanchan::explore_test::finish_block_racing_a_providing_send(); }, 3));
}

// Defect 4: cancel_notify gives a notifier's slot back without telling the
// receiver: a closed receiver that armed meanwhile sleeps forever.
TEST(ExploreMutant, CancelAfterCloseDoesNotWakeTheReceiver) {
  expect_caught(
      "cancel after close does not wake the receiver",
      explore_with_env([] { leanchan::explore_test::cancel_after_close_wakes_the_receiver(); }, 4));
}

// Defect 5: the budget checks its limit with a load and charges with a
// separate RMW: two sends that pass the check together both get a block.
TEST(ExploreMutant, BudgetChecksThenCharges) {
  expect_caught(
      "budget checks then charges",
      explore_with_env([] { leanchan::explore_test::budget_charge_racing_a_refund(); }, 5));
}

// Defect 6: the budget's refund is a load and a store: a charge between
// them is lost, and the bytes held drift from what the channels hold.
TEST(ExploreMutant, BudgetRefundIsNotOneRmw) {
  expect_caught(
      "budget refund as a load and a store",
      explore_with_env([] { leanchan::explore_test::budget_charge_racing_a_refund(); }, 6));
}

// Defect 7: the receiver renumbers a drained block in place without the
// want bit while senders wait: its takes in that block count their permits
// in the header instead of giving them back, and a waiting send whose slot
// is one of them waits forever.
TEST(ExploreMutant, RenumberedBlockWithoutTheWantBit) {
  expect_caught(
      "renumbered block without the want bit",
      explore_with_env([] { leanchan::explore_test::want_bit_on_a_renumbered_block(); }, 7, 1));
}

// Defect 8: a redeem does not wait for the firing to end: the owner lets
// the notifier go while its callback (and the firer's last write) runs.
TEST(ExploreMutant, RedeemDoesNotWaitForTheFiring) {
  expect_caught(
      "redeem without waiting for the firing",
      explore_with_env([] { leanchan::explore_test::redeemed_notifier_goes_at_once(); }, 8));
}

// Defect 9: the release of a drained list leaves the claim position as it
// is when the receiver stands at a block boundary, so the permit word may
// not change: a one-CAS send that checked the blocks before the release
// claims a position in a block it freed.
TEST(ExploreMutant, ReleaseAtABoundaryLeavesTheWordAsItIs) {
  expect_caught("release at a boundary leaves the word",
                explore_with_env([] { leanchan::explore_test::fast_send_racing_a_release(); }, 9));
}

// Defect 10: the one-CAS send computes its bound from the returned
// position read beside the word: the word can come back to the same value
// (a slot given back, one taken) while the returned position moves, and
// the reservation its claim pushes on claims past every numbered block.
// (With the word's bit 3 clear when the send looks, a reservation taken
// meanwhile sets it and the word cannot come back: the scenario holds a
// reservation throughout.)
TEST(ExploreMutant, FastSendBoundFromTheReturnedPosition) {
  expect_caught(
      "fast send's bound from the returned position",
      explore_with_env(
          [] { leanchan::explore_test::fast_send_pushes_a_reservation_while_one_is_held(); }, 10));
}

// Defect 12: a reservation takes its slot without setting the word's bit
// 3, so a one-CAS send that looks before it checks only its own block and
// its claim pushes the reservation on, past every numbered block.
TEST(ExploreMutant, ReservationWithoutThePendingBit) {
  expect_caught(
      "reservation without the pending bit",
      explore_with_env([] { leanchan::explore_test::fast_send_pushes_a_reservation(); }, 12));
}

// Defect 13: the receiver's give-back clears bit 3 without checking that
// no permit is still to claim (here the give-back a second reservation
// collects while the first is unclaimed): the word comes back to the
// value the send read, bit 3 clear, and its claim pushes the first
// reservation past every numbered block.
TEST(ExploreMutant, SettlementClearsThePendingBitBlindly) {
  expect_caught(
      "settlement clears the pending bit blindly",
      explore_with_env([] { leanchan::explore_test::fast_send_pushes_a_reservation(); }, 13));
}

// Defect 11: the one-CAS send checks that the bound's block is numbered,
// not that the bound lies in the claim's own block: the block after it
// can be un-numbered without the word changing, and the word come back to
// the value the send read; the reservation its claim pushes on lands in
// the block that went.
TEST(ExploreMutant, FastSendBoundPastTheClaimsBlock) {
  expect_caught(
      "fast send's bound past the claim's block",
      explore_with_env(
          [] { leanchan::explore_test::fast_send_pushes_a_reservation_past_an_unnumbering(); },
          11));
}

// Defect 14: a send that numbered its block without a permit claims in
// its second CAS without looking at the list again: the receiver freed
// that block meanwhile (found empty, Retention::kKeepNone).
TEST(ExploreMutant, ProvidedSendClaimsWithoutLookingAgain) {
  expect_caught(
      "provided send claims without looking again",
      explore_with_env([] { leanchan::explore_test::fast_send_provides_racing_a_release(); }, 14));
}

// Defect 15: a settlement hands a slot to a waiting sender without
// setting bit 3: the grant is a permit still to claim, and a one-CAS send
// that checks only its own block pushes it past the numbered blocks.
TEST(ExploreMutant, GrantWithoutThePendingBit) {
  expect_caught(
      "grant without the pending bit",
      explore_with_env([] { leanchan::explore_test::want_bit_on_a_renumbered_block(); }, 15, 1));
}

// Defect 16: a blocking send that finds a slot free takes it in
// acquire_or_queue without bit 3, with the same result.
TEST(ExploreMutant, QueueingAcquireWithoutThePendingBit) {
  expect_caught(
      "queueing acquire without the pending bit",
      explore_with_env([] { leanchan::explore_test::want_bit_on_a_renumbered_block(); }, 16, 1));
}

// Defect 17: the receiver's give-back at a block's end subtracts its slots
// from the word without looking at the queue: a sender queued for a slot
// is never handed one (nor woken), and with bit 1 left set no other send
// takes the slot either.
TEST(ExploreMutant, SettlementIgnoresTheQueue) {
  expect_caught(
      "settlement ignores the queue",
      explore_with_env([] { leanchan::explore_test::want_bit_on_a_renumbered_block(); }, 17, 1));
}

// Defect 18: the same one-subtraction settlement whenever no sender is
// queued, without reading bit 1: a cancelled notifier's bit survives, and
// the last send finds "senders wait" with the slot free.
TEST(ExploreMutant, SettlementTrustsAnEmptyQueue) {
  expect_caught(
      "settlement trusts an empty queue",
      explore_with_env([] { leanchan::explore_test::cancelled_notifier_then_give_back(); }, 18, 2));
}

// Defect 19: a hand-off shows its grant when it is decided, before the
// permit word's settle makes it take effect: a close in between withdraws
// it while the owner redeems it (the slot counted twice) or sleeps
// awaiting the firing (put back to plain firing, never woken).
TEST(ExploreMutant, GrantShownBeforeTheSettle) {
  expect_caught(
      "grant shown before the settle",
      explore_with_env([] { leanchan::explore_test::redeem_racing_a_withdrawn_hand_off(); }, 19));
}

// Defect 20: the last sender's drop closes the channel but leaves a slot
// already handed to its send notifier in use: nobody can redeem it, and
// the receiver sleeps for good.
TEST(ExploreMutant, LastSenderKeepsAnUnredeemedSlot) {
  expect_caught(
      "last sender keeps an unredeemed slot",
      explore_with_env([] { leanchan::explore_test::last_sender_racing_a_hand_off(); }, 20));
}

// Defect 21: the provisioning check reads the last numbered tag before
// the list word: an un-numbering between the two reads is missed, and the
// reservation claims in a block no longer numbered.
TEST(ExploreMutant, CoversReadsTheTagBeforeTheLock) {
  expect_caught(
      "covers reads the tag before the lock",
      explore_with_env([] { leanchan::explore_test::reservation_racing_an_unnumbering(); }, 21));
}

// Defect 22: retiring the senders' block leaves the senders' block on it:
// a send into the next block then starts from a block no longer numbered.
TEST(ExploreMutant, RetirementLeavesTheSendersBlockBehind) {
  expect_caught(
      "retirement leaves the senders' block behind",
      explore_with_env(
          [] { leanchan::explore_test::send_past_the_senders_block_racing_its_retirement(); }, 22));
}

}  // namespace
