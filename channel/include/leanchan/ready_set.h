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
// destroyed while queued (drain first, or clear the receiver's notifier and
// drain once more).
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
  // were visited. Never blocks.
  template <class Visit>
  std::size_t drain(Visit&& visit) {
    ReadyEntry* entry = take_all();
    std::size_t count = 0;
    while (entry != nullptr) {
      ReadyEntry* next = entry->next_;
      // release: a fire after this store queues the entry again.
      entry->queued_.store(false, std::memory_order_release);
      visit(*entry);
      ++count;
      entry = next;
    }
    return count;
  }

 private:
  friend class ReadyEntry;
  void push(ReadyEntry* entry) noexcept;
  ReadyEntry* take_all() noexcept;  // oldest first; clears the fd

  int fd_;         // polled by the loop
  int signal_fd_;  // written by push (the same eventfd on Linux; a pipe's write end elsewhere)
  internal::Atomic<ReadyEntry*> head_{nullptr};  // newest first (a Treiber stack)
};

static_assert(sizeof(ReadyEntry) == 72, "docs/design.md states an entry's size");

}  // namespace leanchan

#endif  // LEANCHAN_READY_SET_H_
