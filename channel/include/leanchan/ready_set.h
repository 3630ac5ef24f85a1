// SPDX-License-Identifier: MIT
// leanchan/ready_set.h: one file descriptor (an eventfd on Linux, a pipe on
// other POSIX systems) for many channels, so a poll/epoll/kqueue loop
// serves thousands of receivers from one thread.
//
//   leanchan::ReadySet ready;                       // one eventfd
//   struct Service {
//     leanchan::ReadyEntry entry;                   // first: it outlives rx, which
//     leanchan::Receiver<Event> rx;                 // detaches it when destroyed
//     bool ended = false;
//   };
//   service.entry.watch(service.rx);                // attaches the entry's notifier
//   epoll_ctl(epoll, EPOLL_CTL_ADD, ready.fd(), &in_event);
//   for (;;) {
//     epoll_wait(epoll, ...);
//     ready.drain([](leanchan::ReadyEntry& entry) {  // every entry that fired
//       auto* service = static_cast<Service*>(entry.user());
//       do {
//         for (;;) {
//           auto r = service->rx.poll_recv();
//           if (r.ok()) { handle(std::move(r).value()); continue; }
//           if (r.status() == leanchan::PollStatus::kDisconnected) service->ended = true;
//           break;
//         }
//       } while (!service->ended && service->rx.arm_notifier());  // re-arm; true = look again
//     });                                           // (arm_notifier is true for good once ended)
//   }
//
// A ReadyEntry is 72 bytes, owned by the caller (typically inside its
// per-channel state); attaching, firing and draining allocate nothing. The
// eventfd is written only when the ready queue goes from empty to non-empty,
// so a burst across many channels costs one write and one read.
//
// Thread-safety: entries fire from any thread; drain() and fd() belong to
// the loop's thread. An entry must outlive its attachment and must not be
// destroyed while queued: to remove a service, clear its receiver's
// notifier, then destroy the entry if !queued(), or else in the visit the
// next drain makes (see ReadyEntry::queued). The set must outlive every
// entry made on it.
#ifndef LEANCHAN_READY_SET_H_
#define LEANCHAN_READY_SET_H_

#include "leanchan/export.h"

#include <atomic>
#include <cstddef>

#include "leanchan/internal/atomic.h"
#include "leanchan/notifier.h"
#include "leanchan/receiver.h"

namespace leanchan {

class ReadySet;

class LEANCHAN_API ReadyEntry {
 public:
  // `user` is handed back by user() in drain().
  ReadyEntry(ReadySet& set, void* user) noexcept
      : notifier_(&ReadyEntry::fire, this), set_(&set), user_(user) {}
  ReadyEntry(const ReadyEntry&) = delete;
  ReadyEntry& operator=(const ReadyEntry&) = delete;

  // Attaches this entry's notifier to `rx` and arms it. Returns true if `rx`
  // has something right now (the entry is then queued too, so the loop
  // drains it).
  template <class T, std::size_t B>
  bool watch(Receiver<T, B>& rx) noexcept {
    rx.set_notifier(notifier_);
    if (rx.arm_notifier()) {
      fire(this);
      return true;
    }
    return false;
  }
  void* user() const noexcept { return user_; }
  Notifier& notifier() noexcept { return notifier_; }
  // Whether the entry is in its set's queue (it fired since its last
  // visit). An entry may be destroyed only when it is not: after its
  // receiver's clear_notifier() nothing fires it any more, so false then
  // stays false; true means a later drain() visits it, and it must live
  // until then (destroy it in that visit). Inside visit it can be true: a
  // fire that raced the visit's arm_notifier() queued it again. acquire:
  // reads a fire's exchange (acq_rel) whole; what makes the answer final is
  // clear_notifier(), which returns only once no callback runs.
  bool queued() const noexcept { return queued_.load(std::memory_order_acquire); }
  // The entry's callback, for readiness sources other than a leanchan
  // Receiver: call it with the entry's address to queue the entry.
  static void on_ready(void* entry) noexcept { fire(entry); }

 private:
  friend class ReadySet;
  static void fire(void* self) noexcept;

  Notifier notifier_;
  ReadySet* set_;
  ReadyEntry* next_ = nullptr;
  internal::Atomic<bool> queued_{false};
  void* user_;
};

class LEANCHAN_API ReadySet {
 public:
  // Creates the eventfd; throws std::system_error if it cannot.
  ReadySet();
  ~ReadySet();
  ReadySet(const ReadySet&) = delete;
  ReadySet& operator=(const ReadySet&) = delete;

  // Readable (EPOLLIN / POLLIN) while entries are queued.
  int fd() const noexcept { return fd_; }

  // Takes every queued entry, oldest first, and calls visit(entry) for each.
  // An entry that fires again during visit is queued again. Returns how many
  // were visited. Never blocks. If visit throws, the entry it was visiting
  // and those not visited yet are queued again (the fd made readable)
  // before the exception goes on: the next drain visits them.
  template <class Visit>
  std::size_t drain(Visit&& visit) {
    ReadyEntry* entry = take_all();
    std::size_t count = 0;
    // Armed only while visit runs: left armed by an exception (no try:
    // this header also builds with -fno-exceptions).
    UnwindGuard guard{this};
    while (entry != nullptr) {
      ReadyEntry* next = entry->next_;
      // acq_rel, an RMW, not a store: a fire's exchange either comes after
      // this one (it reads false and queues the entry again) or before it
      // (this one reads its true and acquires what the source wrote before
      // firing, which visit then sees). A release store let visit's reads
      // of the source pass it (store buffering): the fire, reading true,
      // queued nothing while visit read the source's old state.
      (void)entry->queued_.exchange(false, std::memory_order_acq_rel);
      guard.visiting = entry;
      guard.rest = next;
      visit(*entry);
      guard.visiting = nullptr;
      guard.rest = nullptr;
      ++count;
      entry = next;
    }
    return count;
  }

 private:
  friend class ReadyEntry;
  void push(ReadyEntry* entry) noexcept;
  ReadyEntry* take_all() noexcept;  // oldest first; clears the fd
  // Queues again a chain that take_all returned (each entry still marked
  // queued), for drain when visit throws.
  void requeue(ReadyEntry* first) noexcept;
  // drain's state while visit runs: on unwinding, the entry being visited
  // is fired again (its visit did not finish) and the rest queued again.
  struct UnwindGuard {
    ReadySet* set;
    ReadyEntry* visiting = nullptr;
    ReadyEntry* rest = nullptr;
    ~UnwindGuard() {
      if (visiting != nullptr) ReadyEntry::on_ready(visiting);
      if (rest != nullptr) set->requeue(rest);
    }
  };

  int fd_;         // polled by the loop
  int signal_fd_;  // written by push (the same eventfd on Linux; a pipe's write end elsewhere)
  internal::Atomic<ReadyEntry*> head_{nullptr};  // newest first (a Treiber stack)
};

static_assert(sizeof(ReadyEntry) == 72, "docs/design.md states an entry's size");

}  // namespace leanchan

#endif  // LEANCHAN_READY_SET_H_
