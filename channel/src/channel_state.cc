// SPDX-License-Identifier: MIT
// The control block (leanchan/internal/channel_state.h): making and freeing
// it, and joining the waiting layer (semaphore.cc) to the permit give-back
// (give_back.cc) for the handles.
#include "leanchan/internal/channel_state.h"

#include <new>

#include "leanchan/channel_registry.h"
#include "leanchan/internal/contract.h"
#include "leanchan/internal/ending.h"
#include "leanchan/internal/give_back.h"

namespace leanchan::internal {
namespace {

// Under the list lock, before a sender (a thread or a notifier) queues:
// what the receiver owes goes back, and the want bit goes up on its block
// in the same RMW. A take after that RMW sees the bit and gives its permit
// back under this lock, so it reaches the new waiter; one before it is
// counted now.
void collect_before_queue(void* context, const Locked& held) noexcept {
  GiveBack::collect_owed_locked(*static_cast<ChannelState*>(context), held, true);
}

}  // namespace

void ChannelState::end_sending() noexcept {
  close();
  GiveBack::give_back_unredeemed(*this);
  notify_receiver();
}

PermitOutcome ChannelState::try_acquire_permits(std::uint32_t count) noexcept {
  const PermitOutcome outcome = semaphore_.try_acquire(count);
  if (outcome != PermitOutcome::kFull) return outcome;
  // Full as the word says; the receiver may have taken messages whose
  // permits it has not given back yet: collect them, and look again.
  return GiveBack::collect_owed(*this) ? semaphore_.try_acquire(count) : outcome;
}

PermitOutcome ChannelState::acquire_permits(std::uint32_t count, const Deadline* deadline,
                                            void* value,
                                            ThreadWaitNode::PushFunction push) noexcept {
  // Not try_acquire_permits: what the receiver owes is collected once,
  // under the lock, if this sender comes to queue; a full channel usually
  // frees a slot by itself within the watch (the receiver gives a block's
  // permits back at its end), and collecting on every full attempt would
  // take the lock the receiver needs for that. The lock-free attempt comes
  // first, before the waiter is even built: most sends end there.
  const PermitOutcome fast = semaphore_.try_acquire(count);
  if (fast != PermitOutcome::kFull) return fast;
  ThreadWaitNode waiter;
  waiter.wanted = count;
  waiter.value = value;
  waiter.push = push;
  waiter.channel = this;
  const PermitOutcome outcome =
      semaphore_.acquire(waiter, deadline, blocks_, BeforeQueue{&collect_before_queue, this});
  // A timed-out waiter's partial grant went back: as Ending::return_unused.
  if (outcome == PermitOutcome::kTimedOut && waiter.wanted != waiter.needed) {
    Ending::notify_receiver_if_closed(*this);
  }
  return outcome;
}

std::uint32_t ChannelState::free_slots() noexcept {
  (void)GiveBack::collect_owed(*this);
  return semaphore_.free_slots();
}

RoomStatus ChannelState::arm_send(WaitNode* node) noexcept {
  return semaphore_.arm_send(node, blocks_, BeforeQueue{&collect_before_queue, this});
}

bool ChannelState::cancel_send(WaitNode* node) noexcept {
  const Semaphore::Cancelled cancelled = semaphore_.cancel_send(node, blocks_);
  if (cancelled == Semaphore::Cancelled::kGrantTaken) {
    // A grant it was woken for and did not use goes to the next waiter.
    Ending::return_unused(*this, 1);
  }
  return cancelled == Semaphore::Cancelled::kUnqueued;
}

void ChannelState::attach_receive_node(WaitNode* node) noexcept {
  // A load when nothing is armed (a first attach): no RMW.
  signal_.disarm();
  const Locked held = blocks_.lock();
  semaphore_.detach_receive_locked(held);  // the one before, if linked
  // Still linked: in another channel's ring (attached to another receiver,
  // or queued as a send notifier). Linking it here too would join the two
  // rings (a slot freed in one handed to a waiter of the other), so that
  // aborts with a message. (The read races only in that misuse.)
  if (node->next != nullptr) [[unlikely]] {
    blocks_.unlock(held);
    contract_violation(
        "set_notifier with a Notifier attached to another receiver or queued on a sender "
        "(one notifier per receiver; clear_notifier or cancel_notify first)");
  }
  node->kind = WaitNode::Kind::kReceive;
  semaphore_.attach_receive_locked(held, node);
  blocks_.unlock(held);
}

void ChannelState::detach_receive_node() noexcept {
  signal_.disarm();
  const Locked held = blocks_.lock();
  semaphore_.detach_receive_locked(held);
  blocks_.unlock(held);
}

bool ChannelState::is_control_block_request(std::size_t bytes, std::size_t alignment) noexcept {
  return alignment == kControlAlignment &&
         (bytes == sizeof(ChannelStateWithResource) || bytes == sizeof(RegisteredChannelState));
}

ChannelState* ChannelState::create(std::uint32_t capacity, std::uint32_t slots, Retention retention,
                                   std::pmr::memory_resource* resource, WaiterWatch watch,
                                   const Registration* registration) {
  if (registration != nullptr) {
    if (resource == nullptr) resource = std::pmr::new_delete_resource();
    void* memory = resource->allocate(sizeof(RegisteredChannelState), kControlAlignment);
    auto* registered = ::new (memory)
        RegisteredChannelState{ChannelState(capacity, slots, retention, true, watch, true),
                               resource,
                               {registration->registry, 0}};
    try {
      registration->registry->add(&registered->state, registration->block_bytes, registration->tag);
    } catch (...) {
      registered->~RegisteredChannelState();
      resource->deallocate(memory, sizeof(RegisteredChannelState), kControlAlignment);
      throw;
    }
    return &registered->state;
  }
  if (resource == nullptr) return new ChannelState(capacity, slots, retention, false, watch);
  void* memory = resource->allocate(sizeof(ChannelStateWithResource), kControlAlignment);
  auto* both = ::new (memory)
      ChannelStateWithResource{ChannelState(capacity, slots, retention, true, watch), resource};
  return &both->state;
}

ChannelState* ChannelState::try_create(std::uint32_t capacity, std::uint32_t slots,
                                       Retention retention, std::pmr::memory_resource* resource,
                                       WaiterWatch watch,
                                       const Registration* registration) noexcept {
  if (resource == nullptr && registration == nullptr) {
    return new (std::nothrow) ChannelState(capacity, slots, retention, false, watch);
  }
  try {
    return create(capacity, slots, retention, resource, watch, registration);
  } catch (...) {
    return nullptr;  // what the resource (or the registry) threw: no memory
  }
}

void ChannelState::destroy(ChannelState* state) noexcept {
  if (!state->has_resource()) {
    delete state;
    return;
  }
  // The state is the first member of a standard-layout struct: the two
  // addresses are the same (pointer-interconvertible). What follows it (the
  // resource pointer, the registry link) is trivially destructible.
  std::pmr::memory_resource* resource = state->memory_resource();
  const std::size_t bytes = state->control_bytes();
  state->~ChannelState();
  resource->deallocate(state, bytes, kControlAlignment);
}

ChannelState::RegistryLink* ChannelState::registry_link() noexcept {
  if (!registered()) return nullptr;
  return &reinterpret_cast<RegisteredChannelState*>(this)->link;
}

void ChannelState::leave_registry_slow() noexcept {
  registry_link()->registry->remove(this);
}

std::size_t ChannelState::control_bytes() const noexcept {
  if (!has_resource()) return sizeof(ChannelState);
  return registered() ? sizeof(RegisteredChannelState) : sizeof(ChannelStateWithResource);
}

std::size_t ChannelState::memory_usage(std::size_t block_bytes) const noexcept {
  return control_bytes() + blocks_.live_blocks() * block_bytes;
}

}  // namespace leanchan::internal
