// SPDX-License-Identifier: MIT
// The waiter queue's ring (leanchan/internal/waiter_queue.h). Every function
// runs under the channel's list lock, so the links are plain fields.
#include "leanchan/internal/waiter_queue.h"

namespace leanchan::internal {
namespace {

bool is_sender(const WaitNode* node) noexcept {
  return node->kind == WaitNode::Kind::kSend || node->kind == WaitNode::Kind::kSendThread;
}

ClosedWatchNode* as_closed_watch(WaitNode* node) noexcept {
  // The node is the first member of a standard-layout ClosedWatchNode.
  return reinterpret_cast<ClosedWatchNode*>(node);
}

}  // namespace

void WaiterQueue::link_before(WaitNode* node, WaitNode* successor) noexcept {
  if (successor == nullptr) {  // an empty ring: the node alone
    node->next = node->prev = node;
    return;
  }
  WaitNode* predecessor = successor->prev;
  predecessor->next = node;
  node->prev = predecessor;
  node->next = successor;
  successor->prev = node;
}

void WaiterQueue::attach_receive(WaitNode* node) noexcept {
  link_before(node, first_.load(std::memory_order_relaxed));
  // release: a sender firing the notifier without the lock (after it read
  // the receiver's arming of its signal word, stored after this) sees the node.
  first_.store(node, std::memory_order_release);
}

void WaiterQueue::detach_receive() noexcept {
  WaitNode* first = first_.load(std::memory_order_relaxed);
  if (first != nullptr && first->kind == WaitNode::Kind::kReceive) remove(first);
}

void WaiterQueue::push_sender(WaitNode* node) noexcept {
  WaitNode* first = first_.load(std::memory_order_relaxed);
  link_before(node, first);  // the ring's end: behind every waiting sender
  // relaxed: lock holders only
  if (first == nullptr) first_.store(node, std::memory_order_relaxed);
}

WaitNode* WaiterQueue::first_sender() const noexcept {
  WaitNode* const first = first_.load(std::memory_order_relaxed);
  if (first == nullptr) return nullptr;
  WaitNode* node = first;
  // Skip the receive notifier and the closed watcher: at most two nodes.
  for (int looked = 0; looked < 3; ++looked) {
    if (is_sender(node)) return node;
    node = node->next;
    if (node == first) return nullptr;
  }
  return nullptr;
}

void WaiterQueue::remove(WaitNode* node) noexcept {
  if (node->next == node) {
    first_.store(nullptr, std::memory_order_relaxed);
  } else {
    node->prev->next = node->next;
    node->next->prev = node->prev;
    if (first_.load(std::memory_order_relaxed) == node) {
      first_.store(node->next, std::memory_order_relaxed);
    }
  }
  node->next = node->prev = nullptr;
}

WaitNode* WaiterQueue::closed_watch_slot() const noexcept {
  WaitNode* const first = first_.load(std::memory_order_relaxed);
  if (first == nullptr) return nullptr;
  WaitNode* node = first;
  if (node->kind == WaitNode::Kind::kReceive) {
    node = node->next;
    if (node == first) return nullptr;
  }
  return node->kind == WaitNode::Kind::kClosedWatch ? node : nullptr;
}

bool WaiterQueue::has_closed_watch() const noexcept {
  return closed_watch_slot() != nullptr;
}

void WaiterQueue::add_closed_watch(ClosedWatchNode* watch) noexcept {
  if (WaitNode* slot = closed_watch_slot()) {
    // Join the group behind its other members; stay out of the ring.
    ClosedWatchNode* representative = as_closed_watch(slot);
    watch->group_next = representative;
    watch->group_prev = representative->group_prev;
    representative->group_prev->group_next = watch;
    representative->group_prev = watch;
    watch->node.next = watch->node.prev = nullptr;
    return;
  }
  watch->group_next = watch->group_prev = watch;
  WaitNode* first = first_.load(std::memory_order_relaxed);
  if (first != nullptr && first->kind == WaitNode::Kind::kReceive) {
    link_before(&watch->node, first->next);  // right after the receive notifier
  } else {
    link_before(&watch->node, first);  // first in the ring (alone in an empty one)
    first_.store(&watch->node, std::memory_order_relaxed);
  }
}

void WaiterQueue::remove_closed_watch(ClosedWatchNode* watch) noexcept {
  if (watch->group_next == watch) {
    remove(&watch->node);
  } else {
    ClosedWatchNode* successor = watch->group_next;
    watch->group_prev->group_next = successor;
    successor->group_prev = watch->group_prev;
    if (watch->node.next != nullptr) {
      // It represented the group in the ring: its successor takes its place.
      const bool was_first = first_.load(std::memory_order_relaxed) == &watch->node;
      link_before(&successor->node, &watch->node);
      remove(&watch->node);
      if (was_first) first_.store(&successor->node, std::memory_order_relaxed);
    }
  }
  watch->group_next = watch->group_prev = nullptr;
}

WaitNode* WaiterQueue::take_all_but_receive() noexcept {
  WaitNode* const first = first_.load(std::memory_order_relaxed);
  if (first == nullptr) return nullptr;
  WaitNode* const receive = first->kind == WaitNode::Kind::kReceive ? first : nullptr;
  WaitNode* taken = nullptr;
  WaitNode** tail = &taken;
  auto append = [&tail](WaitNode* node) {
    *tail = node;
    tail = &node->next;
  };
  WaitNode* node = first;
  do {
    WaitNode* const following = node->next;
    if (node->kind == WaitNode::Kind::kClosedWatch) {
      ClosedWatchNode* const representative = as_closed_watch(node);
      ClosedWatchNode* member = representative;
      do {
        ClosedWatchNode* const next_member = member->group_next;
        member->group_next = member->group_prev = nullptr;
        member->node.prev = nullptr;
        append(&member->node);
        member = next_member;
      } while (member != representative);
    } else if (node != receive) {
      node->prev = nullptr;
      append(node);
    }
    node = following;
  } while (node != first);
  *tail = nullptr;
  if (receive != nullptr) {
    receive->next = receive->prev = receive;
  } else {
    first_.store(nullptr, std::memory_order_relaxed);
  }
  return taken;
}

}  // namespace leanchan::internal
