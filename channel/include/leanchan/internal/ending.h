// SPDX-License-Identifier: MIT
// leanchan/internal/ending.h: how a channel ends (docs/design.md "The
// end"), a protocol of the lifetime counts, the waiting layer, the block
// list and the receiver's signal: a channel has ended when it is closed or
// senderless, with no queued message and no permit out; the receiver must
// learn it even while it sleeps or has armed its notifier.
#ifndef LEANCHAN_INTERNAL_ENDING_H_
#define LEANCHAN_INTERNAL_ENDING_H_

#include <cstdint>

#include "leanchan/export.h"
#include "leanchan/internal/block.h"
#include "leanchan/internal/channel_state.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {

class Ending {
 public:
  // True when nothing is queued and nothing can arrive: closed or
  // senderless, with no queued message and no outstanding permit. Receiver
  // thread, at `receiver_index` (it gives back what it took first, when
  // that decides).
  LEANCHAN_API static bool is_finished(ChannelState& state, std::uint64_t receiver_index) noexcept;
  // A sender gives back permits it will not use (a dropped Permit or
  // PermitBatch, permits whose block could not be allocated, a send
  // notifier's grant cancelled, a timed-out waiter's partial grant):
  // release, then, if the channel is closed, the receiver is told, since
  // the last of them may end it while the receiver sleeps or has armed its
  // notifier. (An open channel cannot end while this sender lives.)
  static void return_unused(ChannelState& state, std::uint32_t count) noexcept {
    state.release_permits(count);
    notify_receiver_if_closed(state);
  }
  // After slots went back to the permit word. acquire (is_closed): a flag
  // only. A close this load misses comes after that release in the word's
  // modification order, so the receiver's own end check after its close
  // sees the slots back.
  static void notify_receiver_if_closed(ChannelState& state) noexcept {
    if (state.is_closed()) state.notify_receiver();
  }
  // The receiver, before it sleeps, watches (with policy.receiver(depth))
  // until ready(context) says the message may be there: true. False when
  // the watch ends without it, or early, from look policy.end_check_look
  // (depth) on, if the channel has ended (is_finished). The end is not
  // asked at once: it reads the shared line, and a receiver that keeps up
  // watches after nearly every message.
  LEANCHAN_API static bool watch_briefly(ChannelState& state, bool (*ready)(const void* context),
                                         const void* context, std::uint64_t receiver_index,
                                         WatchDepth depth,
                                         const WaitPolicy& policy = kWaitPolicy) noexcept;
  // A streaming receiver of a shallow channel, before watch_briefly
  // (ChannelOps::watches_rest_of_block): watches (policy.rest_of_block) until
  // every slot of `block` from `slot` on is published, or slot `slot` is
  // and no ready bit changed between two looks (the senders stopped:
  // waiting on would only delay the message). Returns the looks it made:
  // 0 if `block` (the receiver's cached head, may be null) is not the
  // block tagged `tag`. Bounded; it does not ask whether the channel has
  // ended (the watch after it does); the caller then takes, or watches and
  // sleeps, as it would have. Receiver thread only: it reads its own head
  // block with relaxed loads, as ChannelOps::may_be_ready does (try_take
  // decides).
  LEANCHAN_API static int watch_rest_of_block(const BlockHeader* block, std::uint32_t tag,
                                              std::uint32_t slot, std::uint32_t slots,
                                              const WaitPolicy& policy = kWaitPolicy) noexcept;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_ENDING_H_
