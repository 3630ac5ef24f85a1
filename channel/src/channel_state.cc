// SPDX-License-Identifier: MIT
// What needs more than one part of the control block: the receiver's bounded
// watching before it sleeps (step 11), attaching its notifier (the waiter
// queue under the list lock, and the signal), and memory_usage. The parts
// live in block_list.cc, bound.cc (the bound's protocol with the waiter
// queue), receiver_signal.cc and waiter_queue.cc.
#include "leanchan/internal/channel_state.h"

#include <climits>
#include <new>
#include <thread>

#include "leanchan/internal/atomic.h"

namespace leanchan::internal {
namespace {

constexpr int kWatchLooks = spin_budget(16);   // receiver: looks with doubling pauses, then
constexpr int kWatchYields = spin_budget(16);  // yields, then it sleeps
constexpr int kWatchMaxPauses = 64;
// Looks before the watch also asks whether the channel has ended: after
// 1 + 2 + 4 + 8 pauses (about 0.4 us where a pause takes 25 ns, up to
// about 1 us where it takes 140 cycles), longer than a sender that keeps
// up takes between two messages.
constexpr int kWatchEndAfterLooks = spin_budget(4);

}  // namespace

bool ChannelState::watch_briefly(bool (*ready)(const void* context), const void* context,
                                 std::uint64_t receiver_index) noexcept {
  // The pauses between looks double (1, 2, 4, ... 64), then the thread
  // yields: watching shared lines in a tight loop would slow the very
  // sender being waited for.
  int pauses = 1;
  for (int look = 0; look < kWatchLooks + kWatchYields; ++look) {
    if (ready(context)) return true;
    if (look >= kWatchEndAfterLooks && is_finished(receiver_index)) return false;
    if (look < kWatchLooks) {
      for (int i = 0; i < pauses; ++i) cpu_relax();
      pauses = pauses < kWatchMaxPauses ? pauses * 2 : kWatchMaxPauses;
    } else {
      yield_thread();
    }
  }
  return false;
}

bool ChannelState::provide(const BlockLayout& layout) noexcept {
  // Under the lock the bound is computed afresh, and exactly: r (the
  // position up to which permits went back) and the receiver's block word
  // move only under the lock, so returned_position rebuilds r exactly.
  // release_if_drained (the only free of a block at or after r) waits for
  // the lock too.
  lock_list();
  const std::uint32_t permits = bound_.permits_in_use();  // seq_cst, as last_position_bound
  const std::uint64_t low = rx_position_.load(std::memory_order_seq_cst);
  const std::uint64_t claimed = blocks_.tail_position();
  const std::uint64_t receiver =
      returned_position(low, claimed, blocks_.receiver_tag_locked(), layout.slots);
  const std::uint64_t last = receiver + permits - 1;
  const bool ok =
      blocks_.extend_locked(block_tag(last / layout.slots), layout, bound_.senders_wait());
  unlock_list();
  return ok;
}

void ChannelState::attach_receive_node(WaitNode* node) noexcept {
  detach_receive_node();
  node->kind = WaitNode::Kind::kReceive;
  lock_list();
  waiters_.attach_receive(node);
  unlock_list();
}

void ChannelState::detach_receive_node() noexcept {
  disarm_receive();
  lock_list();
  waiters_.detach_receive();
  unlock_list();
}

ChannelState* ChannelState::create(std::uint32_t capacity, std::uint32_t slots, Retention retention,
                                   std::pmr::memory_resource* resource) {
  if (resource == nullptr) return new ChannelState(capacity, slots, retention, false);
  void* memory =
      resource->allocate(sizeof(ChannelStateWithResource), alignof(ChannelStateWithResource));
  auto* both = ::new (memory)
      ChannelStateWithResource{ChannelState(capacity, slots, retention, true), resource};
  return &both->state;
}

ChannelState* ChannelState::try_create(std::uint32_t capacity, std::uint32_t slots,
                                       Retention retention,
                                       std::pmr::memory_resource* resource) noexcept {
  if (resource == nullptr) {
    return new (std::nothrow) ChannelState(capacity, slots, retention, false);
  }
  try {
    return create(capacity, slots, retention, resource);
  } catch (...) {
    return nullptr;  // what the resource threw: no memory for the control block
  }
}

void ChannelState::destroy(ChannelState* state) noexcept {
  if (!state->has_resource()) {
    delete state;
    return;
  }
  // The state is the first member of a standard-layout struct: the two
  // addresses are the same (pointer-interconvertible).
  auto* both = reinterpret_cast<ChannelStateWithResource*>(state);
  std::pmr::memory_resource* resource = both->resource;
  both->~ChannelStateWithResource();
  resource->deallocate(both, sizeof(ChannelStateWithResource), alignof(ChannelStateWithResource));
}

std::pmr::memory_resource* ChannelState::memory_resource() const noexcept {
  if (!has_resource()) return nullptr;
  return reinterpret_cast<const ChannelStateWithResource*>(this)->resource;
}

std::size_t ChannelState::control_bytes() const noexcept {
  return has_resource() ? sizeof(ChannelStateWithResource) : sizeof(ChannelState);
}

std::size_t ChannelState::memory_usage(const BlockLayout& layout) const noexcept {
  return control_bytes() + blocks_.live_blocks() * layout.bytes;
}

}  // namespace leanchan::internal
