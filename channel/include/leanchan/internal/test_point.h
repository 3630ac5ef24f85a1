// SPDX-License-Identifier: MIT
// leanchan/internal/test_point.h: named points in the channel's code where
// a test can hold a thread, to exercise a window of a few instructions
// deterministically (a stress test rarely lands in one).
//
// Only the test-points build of the library (the CMake target
// leanchan_channel_test_points, compiled with LEANCHAN_TEST_POINTS) calls
// the hook; in every other build LEANCHAN_TEST_POINT expands to nothing, so
// the production library has no extra code, field or call.
#ifndef LEANCHAN_INTERNAL_TEST_POINT_H_
#define LEANCHAN_INTERNAL_TEST_POINT_H_

#if defined(LEANCHAN_TEST_POINTS)
#include <atomic>
#include <cstdint>

namespace leanchan::internal {

enum class TestPoint {
  // arm_send: the notifier is queued and the list lock released; the
  // caller has not returned yet.
  kSendNotifierQueued,
  // acquire_permits: a thread waiter's deadline passed; it has not yet
  // taken the lock to leave the queue.
  kThreadWaiterTimedOut,
  // settle_locked: waiters were granted slots under the list lock; the
  // permit word has not been updated yet.
  kHandOffDecided,
  // settle_locked: the permit word recorded the hand-off; the granted
  // nodes are unlinked but not marked yet (they still read "queued").
  kHandOffRecorded,
  // ListLock::lock: the list lock was just taken (tests count the acquisitions
  // a workload makes).
  kListLocked,
  // BlockList::open_block: a sender looking for its block under the lock
  // stepped over one block walking from the head (tests count the blocks a
  // send walks).
  kBlockWalked,
  // BlockList: the senders' block moved one block forward (a send entering
  // a block numbered past it, or a provider), without numbering one.
  kSendersBlockStepped,
  // Permits go back to the bound (or to waiting senders): release_permits,
  // and the receiver's give-backs (finish_block, give_back_taken); once
  // per give-back, whatever the count.
  kPermitsGivenBack,
  // acquire_permits: a thread waiter is queued (its want bit raised) and
  // the list lock released; it has not started waiting yet.
  kSendThreadQueued,
  // Semaphore::acquire's await: a queued thread waiter looked at its node's
  // word for its outcome (once per look, watching or after a wake-up).
  kThreadWaiterLooked,
  // The same waiter is about to sleep on its word (a futex wait).
  kThreadWaiterSleeps,
  // Ending::watch_briefly: the receiver starts watching with
  // WaitPolicy::receiver_deep, receiver_long or receiver_short.
  kReceiverWatchesDeep,
  kReceiverWatchesLong,
  kReceiverWatchesShort,
  // ChannelOps::watch_rest_of_block: a streaming receiver of a shallow
  // channel starts watching for the rest of its block (WaitPolicy::rest_of_block).
  kReceiverWatchesRestOfBlock,
  // ChannelState::claim_position: a holder of a permit taken earlier
  // claims its position (the two-step send, a reservation's send), not
  // the one-CAS send (tests count how often a workload takes two steps).
  kClaimedWithAPermit,
  // BlockPool::trim: the kept pages were taken off their stack and are
  // not on the free-page stack yet.
  kTrimHoldsKeptPages,
  // Sender::provided: the blocks for permits just taken could not be
  // provided (kNoMemory); the permits have not gone back yet.
  kProvideRefused,
  // ThreadPoolExecutor::join: stop() has been called; the workers are
  // about to be joined (a run may still be in progress).
  kPoolJoining,
  // BlockPool's sweep of the partial stacks that hold stranded pages
  // (sweep_stranded): it stepped over one listed page (tests count the
  // pages the sweeps walk).
  kPoolSweepStepped,
};

// Where the positions of a channel created from now on start (ChannelState's
// constructor; position.h), rounded down to a block boundary modulo M: a
// test sets it to run through the wrap of positions at M, which takes
// at least 2^30 blocks of messages from 0. Set by tests only, with no channel being
// created meanwhile.
inline std::atomic<std::uint64_t> test_start_position{0};

// The hook, called on the thread that reaches a point. Set by tests only.
inline std::atomic<void (*)(TestPoint)> test_point_hook{nullptr};

inline void reach(TestPoint point) {
  if (auto* hook = test_point_hook.load(std::memory_order_acquire)) hook(point);
}

}  // namespace leanchan::internal

#define LEANCHAN_TEST_POINT(point) \
  ::leanchan::internal::reach(::leanchan::internal::TestPoint::point)
#else
#define LEANCHAN_TEST_POINT(point) static_cast<void>(0)
#endif

#endif  // LEANCHAN_INTERNAL_TEST_POINT_H_
