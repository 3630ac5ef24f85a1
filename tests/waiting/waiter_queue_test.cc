// SPDX-License-Identifier: MIT
// The waiter queue's ring (leanchan/internal/waiter_queue.h): the receive
// notifier stays first, closed watchers stay out of the senders' way (one
// representative in the ring), senders keep FIFO order, every operation is
// O(1), and close takes everything but the receive notifier.
#include "leanchan/internal/waiter_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using leanchan::internal::ClosedWatchNode;
using leanchan::internal::WaiterQueue;
using leanchan::internal::WaitNode;

struct SenderNode : WaitNode {
  SenderNode() { kind = Kind::kSend; }
};

std::vector<WaitNode*> taken_list(WaitNode* taken) {
  std::vector<WaitNode*> out;
  for (; taken != nullptr; taken = taken->next) out.push_back(taken);
  return out;
}

TEST(WaiterRing, SendersLeaveInArrivalOrder) {
  WaiterQueue queue;
  SenderNode a, b, c;
  EXPECT_EQ(queue.first_sender(), nullptr);
  queue.push_sender(&a);
  queue.push_sender(&b);
  queue.push_sender(&c);
  EXPECT_EQ(queue.first_sender(), &a);
  queue.remove(&b);  // from the middle
  EXPECT_EQ(queue.first_sender(), &a);
  queue.remove(&a);
  EXPECT_EQ(queue.first_sender(), &c);
  queue.remove(&c);
  EXPECT_EQ(queue.first_sender(), nullptr);
  EXPECT_EQ(queue.first(), nullptr);
}

TEST(WaiterRing, ReceiveNotifierStaysFirstAndIsNeverASender) {
  WaiterQueue queue;
  SenderNode a, b;
  WaitNode receive;
  receive.kind = WaitNode::Kind::kReceive;
  queue.push_sender(&a);
  queue.attach_receive(&receive);
  queue.push_sender(&b);
  EXPECT_EQ(queue.first(), &receive);
  EXPECT_EQ(queue.first_sender(), &a);
  queue.remove(&a);
  EXPECT_EQ(queue.first(), &receive);
  EXPECT_EQ(queue.first_sender(), &b);
  queue.remove(&b);
  EXPECT_EQ(queue.first_sender(), nullptr);
  queue.detach_receive();
  EXPECT_EQ(queue.first(), nullptr);
}

TEST(WaiterRing, ClosedWatchersKeepOneRepresentativeInTheRing) {
  WaiterQueue queue;
  WaitNode receive;
  receive.kind = WaitNode::Kind::kReceive;
  SenderNode a;
  ClosedWatchNode w1, w2, w3;
  for (ClosedWatchNode* w : {&w1, &w2, &w3}) w->node.kind = WaitNode::Kind::kClosedWatch;
  queue.attach_receive(&receive);
  queue.push_sender(&a);
  queue.add_closed_watch(&w1);
  queue.add_closed_watch(&w2);
  queue.add_closed_watch(&w3);
  // Ring: receive, w1, a. w2 and w3 hang off w1.
  EXPECT_EQ(queue.first(), &receive);
  EXPECT_EQ(receive.next, &w1.node);
  EXPECT_EQ(w1.node.next, &a);
  EXPECT_EQ(w2.node.next, nullptr);
  EXPECT_EQ(queue.first_sender(), &a);
  // The representative leaves: the next member takes its place.
  queue.remove_closed_watch(&w1);
  EXPECT_EQ(receive.next, &w2.node);
  EXPECT_EQ(w2.node.next, &a);
  EXPECT_TRUE(queue.has_closed_watch());
  queue.remove_closed_watch(&w3);  // a member that is not in the ring
  EXPECT_EQ(receive.next, &w2.node);
  queue.remove_closed_watch(&w2);
  EXPECT_FALSE(queue.has_closed_watch());
  EXPECT_EQ(receive.next, &a);
  EXPECT_EQ(queue.first_sender(), &a);
}

TEST(WaiterRing, RepresentativeFirstInTheRingIsReplacedAsFirst) {
  WaiterQueue queue;
  ClosedWatchNode w1, w2;
  for (ClosedWatchNode* w : {&w1, &w2}) w->node.kind = WaitNode::Kind::kClosedWatch;
  SenderNode a;
  queue.add_closed_watch(&w1);
  queue.push_sender(&a);
  queue.add_closed_watch(&w2);
  EXPECT_EQ(queue.first(), &w1.node);
  queue.remove_closed_watch(&w1);
  EXPECT_EQ(queue.first(), &w2.node);
  EXPECT_EQ(queue.first_sender(), &a);
}

TEST(WaiterRing, TakeAllLeavesOnlyTheReceiveNotifier) {
  WaiterQueue queue;
  WaitNode receive;
  receive.kind = WaitNode::Kind::kReceive;
  SenderNode a, b;
  ClosedWatchNode w1, w2;
  for (ClosedWatchNode* w : {&w1, &w2}) w->node.kind = WaitNode::Kind::kClosedWatch;
  queue.push_sender(&a);
  queue.add_closed_watch(&w1);
  queue.attach_receive(&receive);
  queue.add_closed_watch(&w2);
  queue.push_sender(&b);
  const std::vector<WaitNode*> taken = taken_list(queue.take_all_but_receive());
  // Every waiter once; senders in FIFO order relative to each other.
  ASSERT_EQ(taken.size(), 4u);
  std::vector<WaitNode*> senders;
  for (WaitNode* node : taken) {
    if (node->kind == WaitNode::Kind::kSend) senders.push_back(node);
  }
  EXPECT_EQ(senders, (std::vector<WaitNode*>{static_cast<WaitNode*>(&a), &b}));
  EXPECT_EQ(queue.first(), &receive);
  EXPECT_EQ(receive.next, &receive);
  EXPECT_EQ(queue.first_sender(), nullptr);
  EXPECT_FALSE(queue.has_closed_watch());
}

TEST(WaiterRing, TakeAllOfAnEmptyQueueIsEmpty) {
  WaiterQueue queue;
  EXPECT_EQ(queue.take_all_but_receive(), nullptr);
  SenderNode a;
  queue.push_sender(&a);
  EXPECT_EQ(taken_list(queue.take_all_but_receive()),
            (std::vector<WaitNode*>{static_cast<WaitNode*>(&a)}));
  EXPECT_EQ(queue.first(), nullptr);
}

}  // namespace
