// SPDX-License-Identifier: MIT
// How a channel ends (leanchan/internal/ending.h).
#include "leanchan/internal/ending.h"

#include "leanchan/internal/give_back.h"
#include "leanchan/internal/test_point.h"
#include "leanchan/internal/wait_policy.h"

namespace leanchan::internal {

bool Ending::is_finished(ChannelState& state, std::uint64_t receiver_index) noexcept {
  // Senders first: once it reads 0 no reservation can ever be made again, so
  // a zero use count read afterwards is final. (Read the other way round, a
  // sender could reserve, send and leave between the two loads.)
  // seq_cst: these loads are the receiver's re-check after announcing a
  // wait (ReceiverSignal::announce_wait) and pair with remove_sender's and
  // the permit word's releasing RMWs.
  // Slots in use may be the receiver's own takes not given back yet: when
  // that decides, they go back first (under the lock, so no giver is half
  // way), and the word is read again. Nothing is owed when the returned
  // position is the receiver's (`receiver_index`): no lock then. (A stale
  // read of it is older, hence smaller: never a false "nothing owed".)
  const bool senderless = state.lifetime_.senders() == 0;
  PermitWord::Word word = state.semaphore_.word().load_for_end_check();
  if (!senderless && (word & PermitWord::kClosedBit) == 0) return false;
  if (PermitWord::used_of(word) == 0) return true;
  // relaxed: see above; written under the lock.
  if (state.returned_low_.load(std::memory_order_relaxed) ==
      static_cast<std::uint16_t>(receiver_index)) {
    return false;
  }
  GiveBack::give_back_taken(state);
  word = state.semaphore_.word().load_for_end_check();
  return PermitWord::used_of(word) == 0;
}

bool Ending::watch_briefly(ChannelState& state, bool (*ready)(const void* context),
                           const void* context, std::uint64_t receiver_index, WatchDepth depth,
                           const WaitPolicy& policy) noexcept {
  // Pauses between looks (doubling, or 64 or 512 each in the deep and long
  // watches), then yields: watching shared lines in a tight loop would slow
  // the very sender being waited for.
  switch (depth) {
    case WatchDepth::kLong: LEANCHAN_TEST_POINT(kReceiverWatchesLong); break;
    case WatchDepth::kDeep: LEANCHAN_TEST_POINT(kReceiverWatchesDeep); break;
    case WatchDepth::kShort: LEANCHAN_TEST_POINT(kReceiverWatchesShort); break;
  }
  const int first_end_check = policy.end_check_look(depth);
  int look = 0;
  bool found = false;
  (void)watch(policy.receiver(depth), [&] {
    found = ready(context);
    if (found) return true;
    return look++ >= first_end_check && is_finished(state, receiver_index);
  });
  return found;
}

int Ending::watch_rest_of_block(const BlockHeader* block, std::uint32_t tag, std::uint32_t slot,
                                std::uint32_t slots, const WaitPolicy& policy) noexcept {
  LEANCHAN_TEST_POINT(kReceiverWatchesRestOfBlock);
  if (block == nullptr || block->tag(std::memory_order_relaxed) != tag) return 0;
  // The ready bits of slots `slot` .. slots - 1 (slots <= 32).
  const auto rest =
      static_cast<std::uint32_t>((std::uint64_t{1} << slots) - (std::uint64_t{1} << slot));
  const std::uint32_t next = std::uint32_t{1} << slot;
  // Stalled: the same bits at two looks in a row (a pause budget apart).
  int looks = 0;
  std::uint32_t seen = 0;
  (void)watch(policy.rest_of_block, [&] {
    // relaxed: a look for the watch only; try_take's seq_cst load decides.
    const std::uint32_t bits = block->ready.load(std::memory_order_relaxed);
    const bool stalled = looks > 0 && bits == seen;
    ++looks;
    seen = bits;
    return (bits & rest) == rest || ((bits & next) != 0 && stalled);
  });
  return looks;
}

}  // namespace leanchan::internal
