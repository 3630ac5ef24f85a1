// SPDX-License-Identifier: MIT
// A randomized model check of the waiter queue's ring (internal API): every
// operation mirrored on a plain list, and the two compared after each step.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "leanchan/internal/waiter_queue.h"

using namespace leanchan::internal;

namespace {

struct Model {
  WaitNode* receive = nullptr;
  std::deque<ClosedWatchNode*> watches;  // group order (representative first is not modelled)
  std::deque<WaitNode*> senders;
};

void check(const WaiterQueue& q, const Model& m) {
  WaitNode* first = q.first();
  std::size_t ring_expected = (m.receive ? 1 : 0) + (m.watches.empty() ? 0 : 1) + m.senders.size();
  if (ring_expected == 0) {
    ASSERT_EQ(first, nullptr);
    return;
  }
  ASSERT_NE(first, nullptr);
  std::vector<WaitNode*> ring;
  WaitNode* n = first;
  do {
    ASSERT_EQ(n->next->prev, n);
    ring.push_back(n);
    n = n->next;
    ASSERT_LE(ring.size(), 10000u);
  } while (n != first);
  ASSERT_EQ(ring.size(), ring_expected);
  std::size_t i = 0;
  if (m.receive) {
    ASSERT_EQ(ring[i], m.receive);
    ++i;
  }
  if (!m.watches.empty()) {
    ASSERT_EQ(ring[i]->kind, WaitNode::Kind::kClosedWatch);
    auto* rep = reinterpret_cast<ClosedWatchNode*>(ring[i]);
    // group ring contains exactly the watches
    std::vector<ClosedWatchNode*> group;
    ClosedWatchNode* g = rep;
    do {
      ASSERT_EQ(g->group_next->group_prev, g);
      group.push_back(g);
      g = g->group_next;
      ASSERT_LE(group.size(), 10000u);
    } while (g != rep);
    ASSERT_EQ(group.size(), m.watches.size());
    for (auto* w : m.watches) ASSERT_NE(std::find(group.begin(), group.end(), w), group.end());
    ++i;
  }
  for (auto* s : m.senders) {
    ASSERT_EQ(ring[i], s);
    ++i;
  }
  ASSERT_EQ(q.first_sender(), m.senders.empty() ? nullptr : m.senders.front());
  ASSERT_EQ(q.has_closed_watch(), !m.watches.empty());
}

}  // namespace

TEST(WaiterRingModel, RandomOps) {
  for (unsigned seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    WaiterQueue q;
    Model m;
    WaitNode recv_nodes[2];
    std::vector<WaitNode> snodes(16);
    std::vector<ClosedWatchNode> wnodes(8);
    std::vector<bool> s_in(16), w_in(8);
    for (auto& s : snodes) s.kind = WaitNode::Kind::kSend;
    for (auto& w : wnodes) w.node.kind = WaitNode::Kind::kClosedWatch;
    for (int step = 0; step < 300; ++step) {
      int op = rng() % 7;
      if (op == 0) {
        if (m.receive) {
          q.detach_receive();
          m.receive = nullptr;
        }
        WaitNode* r = &recv_nodes[rng() % 2];
        r->kind = WaitNode::Kind::kReceive;
        q.attach_receive(r);
        m.receive = r;
      } else if (op == 1) {
        q.detach_receive();
        m.receive = nullptr;
      } else if (op == 2) {
        int k = rng() % 16;
        if (!s_in[k]) {
          q.push_sender(&snodes[k]);
          m.senders.push_back(&snodes[k]);
          s_in[k] = true;
        }
      } else if (op == 3) {
        int k = rng() % 16;
        if (s_in[k]) {
          q.remove(&snodes[k]);
          m.senders.erase(std::find(m.senders.begin(), m.senders.end(), &snodes[k]));
          s_in[k] = false;
        }
      } else if (op == 4) {
        int k = rng() % 8;
        if (!w_in[k]) {
          q.add_closed_watch(&wnodes[k]);
          m.watches.push_back(&wnodes[k]);
          w_in[k] = true;
        }
      } else if (op == 5) {
        int k = rng() % 8;
        if (w_in[k]) {
          q.remove_closed_watch(&wnodes[k]);
          m.watches.erase(std::find(m.watches.begin(), m.watches.end(), &wnodes[k]));
          w_in[k] = false;
        }
      } else if (rng() % 8 == 0) {
        WaitNode* taken = q.take_all_but_receive();
        std::size_t count = 0;
        for (WaitNode* n = taken; n; n = n->next) ++count;
        ASSERT_EQ(count, m.senders.size() + m.watches.size());
        // senders in FIFO order among the taken
        std::vector<WaitNode*> ts;
        for (WaitNode* n = taken; n; n = n->next)
          if (n->kind == WaitNode::Kind::kSend) ts.push_back(n);
        ASSERT_TRUE(std::equal(ts.begin(), ts.end(), m.senders.begin(), m.senders.end()));
        m.senders.clear();
        m.watches.clear();
        std::fill(s_in.begin(), s_in.end(), false);
        std::fill(w_in.begin(), w_in.end(), false);
      }
      check(q, m);
      if (HasFatalFailure()) {
        ADD_FAILURE() << "seed " << seed << " step " << step << " op " << op;
        return;
      }
    }
  }
}
