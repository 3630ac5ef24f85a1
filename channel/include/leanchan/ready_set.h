// SPDX-License-Identifier: MIT
/// @file
/// leanchan/ready_set.h: one file descriptor (an eventfd on Linux, a pipe on
/// other POSIX systems) for many channels, so a poll/epoll/kqueue loop
/// serves thousands of receivers from one thread.
///
/// @code
///   leanchan::ReadySet ready;                       // one eventfd
///   struct Service {
///     Service(leanchan::ReadySet& set, leanchan::Receiver<Event> r)
///         : entry(set, this), rx(std::move(r)) {}  // entry.user() is the service
///     leanchan::ReadyEntry entry;                   // first: it outlives rx, which
///     leanchan::Receiver<Event> rx;                 // detaches it when destroyed
///     bool ended = false;
///   };
///   Service& service = *new Service(ready, std::move(rx));  // deleted once it ends
///   service.entry.watch(service.rx);                // attaches the entry's notifier
///   epoll_ctl(epoll, EPOLL_CTL_ADD, ready.fd(), &in_event);
///   epoll_event events[16];
///   for (;;) {
///     epoll_wait(epoll, events, 16, -1);
///     ready.drain([](leanchan::ReadyEntry& entry) {  // every entry that fired
///       auto* service = static_cast<Service*>(entry.user());
///       do {
///         for (;;) {
///           auto r = service->rx.poll_recv();
///           if (r.ok()) { handle(std::move(r).value()); continue; }
///           if (r.status() == leanchan::PollStatus::kDisconnected) service->ended = true;
///           break;
///         }
///       } while (!service->ended && service->rx.arm_notifier());  // re-arm; true = look again
///       if (service->ended) delete service;        // (arm_notifier is true for good once ended)
///     });                                           // rx detaches, then the entry leaves the set
///   }
/// @endcode
///
/// A ReadyEntry is 72 bytes, owned by the caller (typically inside its
/// per-channel state); attaching, firing and draining allocate nothing. The
/// eventfd is written only when the ready queue goes from empty to non-empty,
/// so a burst across many channels costs one write and one read.
///
/// Thread-safety: entries fire from any thread; drain() and fd() belong to
/// the loop's thread. An entry must outlive its attachment: destroy it after
/// its receiver (declare it first, as above) or after clear_notifier(). On
/// the loop's thread it may then be destroyed at any time, inside a visit
/// too: it leaves the set's queue. On another thread it may be destroyed
/// only while !queued(), which is true from a fire until the end of the
/// visit that follows (see ReadyEntry::queued). The set must outlive
/// every entry made on it (~ReadySet aborts with a message otherwise).
#ifndef LEANCHAN_READY_SET_H_
#define LEANCHAN_READY_SET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "leanchan/export.h"
#include "leanchan/internal/atomic.h"
#include "leanchan/notifier.h"
#include "leanchan/receiver.h"

namespace leanchan {

class ReadySet;

/// One readiness source's place in a ReadySet: a Notifier that queues the entry
/// in its set when it fires. 72 bytes, owned by the caller (leanchan/ready_set.h).
class LEANCHAN_API ReadyEntry {
 public:
  /// `user` is handed back by user() in drain().
  ReadyEntry(ReadySet& set, void* user) noexcept;
  ReadyEntry(const ReadyEntry&) = delete;
  ReadyEntry& operator=(const ReadyEntry&) = delete;
  /// Takes the entry out of its set's queue and out of a drain running on
  /// this thread. Requires that nothing fires it any more (its receiver
  /// cleared the notifier or is gone), and, while queued(), the loop's
  /// thread. The set's fd may then wake the loop with nothing to visit.
  ~ReadyEntry();

  /// Attaches this entry's notifier to `rx` and arms it. Returns true if `rx`
  /// has something right now (the entry is then queued too, so the loop
  /// drains it).
  template <class T, std::size_t B>
  bool watch(Receiver<T, B>& rx) noexcept {
    rx.set_notifier(notifier_);
    if (rx.arm_notifier()) {
      fire(this);
      return true;
    }
    return false;
  }
  /// The `user` pointer given to the constructor.
  void* user() const noexcept { return user_; }
  /// The entry's notifier (watch() attaches it): when it fires, the entry is queued.
  Notifier& notifier() noexcept { return notifier_; }
  /// Whether the set still holds the entry: it is in the set's queue (it
  /// fired since its last visit began) or a drain is visiting it. Only a
  /// thread other than the loop's needs it: there an entry may be destroyed
  /// only when this is false, and after its receiver's clear_notifier()
  /// nothing fires it any more, so false then stays false. acquire: reads
  /// a fire's RMW whole, and the end of the last visit (drain's RMW,
  /// acq_rel), so that the visit's accesses happen before the destruction;
  /// what makes the answer final is clear_notifier(), which returns only
  /// once no callback runs.
  bool queued() const noexcept { return state_.load(std::memory_order_acquire) != 0; }
  /// The entry's callback, for readiness sources other than a leanchan
  /// Receiver: call it with the entry's address to queue the entry.
  static void on_ready(void* entry) noexcept { fire(entry); }

 private:
  friend class ReadySet;
  static void fire(void* self) noexcept;

  // state_'s bits. kQueued: fired since its last visit began (on the stack,
  // in a drain's batch, or, while kVisiting, to be pushed when the visit
  // ends). kVisiting: a drain is visiting it (it is on no stack then).
  static constexpr std::uint8_t kQueued = 1;
  static constexpr std::uint8_t kVisiting = 2;

  Notifier notifier_;
  ReadySet* set_;
  ReadyEntry* next_ = nullptr;
  internal::Atomic<std::uint8_t> state_{0};
  void* user_;
};

/// One file descriptor for many channels: the ReadyEntry objects that fired wait
/// in its queue, and the fd is readable, until drain() visits them.
class LEANCHAN_API ReadySet {
 public:
  /// Creates the eventfd; throws std::system_error if it cannot.
  ReadySet();
  /// Aborts with a message if an entry made on the set is still alive: it
  /// would fire into, or unlink itself from, a destroyed set.
  ~ReadySet();
  ReadySet(const ReadySet&) = delete;
  ReadySet& operator=(const ReadySet&) = delete;

  /// Readable (EPOLLIN / POLLIN) while entries are queued.
  int fd() const noexcept { return fd_; }

  /// Takes every queued entry, oldest first, and calls visit(entry) for each.
  /// An entry that fires again during its own visit is queued again when
  /// that visit returns (behind entries that fired meanwhile), so the next
  /// drain visits it; a drain nested in that visit does not see it. Returns
  /// how many were visited. Never blocks. If visit throws, the entry it was
  /// visiting and those not visited yet are queued again (the fd made
  /// readable) before the exception goes on: the next drain visits them.
  template <class Visit>
  std::size_t drain(Visit&& visit) {
    DrainScope scope(this, take_all());
    std::size_t count = 0;
    while (scope.rest != nullptr) {
      ReadyEntry* const entry = scope.rest;
      scope.rest = entry->next_;  // read before the visit can destroy it
      // acq_rel, an RMW, not a store: a fire's fetch_or either comes after
      // this one (it reads kVisiting and the visit's end pushes the entry
      // again) or before it (this one reads its kQueued and acquires what
      // the source wrote before firing, which visit then sees). A release
      // store let visit's reads of the source pass it (store buffering):
      // the fire, reading kQueued, queued nothing while visit read the
      // source's old state.
      (void)entry->state_.exchange(ReadyEntry::kVisiting, std::memory_order_acq_rel);
      scope.visiting = entry;
      visit(*entry);
      // Null if visit destroyed the entry (~ReadyEntry forgot it).
      if (scope.visiting != nullptr) end_visit(std::exchange(scope.visiting, nullptr));
      ++count;
    }
    return count;
  }

 private:
  friend class ReadyEntry;
  void push(ReadyEntry* entry) noexcept;
  // A visit of `entry` returned: it leaves the set (queued() turns false),
  // or, if it fired during the visit, goes back on the stack.
  void end_visit(ReadyEntry* entry) noexcept;
  ReadyEntry* take_all() noexcept;  // oldest first; clears the fd
  // Queues again a chain that take_all returned (each entry still marked
  // queued), for drain when visit throws.
  void requeue(ReadyEntry* first) noexcept;
  // Takes `entry` (queued, its source silent) off the stack, on the loop's
  // thread, for ~ReadyEntry.
  void unlink_queued(ReadyEntry* entry) noexcept;
  void check_no_entries() const noexcept;  // for ~ReadySet

  // A drain's batch while visit runs, known to its thread (a thread-local
  // chain, innermost first), so that ~ReadyEntry can take an entry out of
  // it. Ending by an exception (no try: this header also builds with
  // -fno-exceptions), it queues the entry being visited again (its visit
  // did not finish) and the rest too.
  class LEANCHAN_API DrainScope {
   public:
    DrainScope(ReadySet* set, ReadyEntry* batch) noexcept;
    ~DrainScope();
    DrainScope(const DrainScope&) = delete;
    DrainScope& operator=(const DrainScope&) = delete;

    // Forgets `entry` in every drain of this thread: returns whether it was
    // in a batch's rest or being visited (so not on the stack).
    static bool forget(ReadyEntry* entry) noexcept;

    ReadySet* const set;
    ReadyEntry* visiting = nullptr;
    ReadyEntry* rest;  // the batch not visited yet, oldest first

   private:
    DrainScope* const outer_;
  };
  // This thread's running drains, innermost first (visit may drain too).
  static thread_local DrainScope* innermost_drain_;

  int fd_;         // polled by the loop
  int signal_fd_;  // written by push (the same eventfd on Linux; a pipe's write end elsewhere)
  internal::Atomic<ReadyEntry*> head_{nullptr};  // newest first (a Treiber stack)
  // Entries made on the set and not destroyed yet, for ~ReadySet's check.
  // relaxed: an entry's destruction must happen before ~ReadySet anyway
  // (the caller orders them); the count itself orders nothing.
  internal::Atomic<std::size_t> entries_{0};
};

inline ReadyEntry::ReadyEntry(ReadySet& set, void* user) noexcept
    : notifier_(&ReadyEntry::fire, this), set_(&set), user_(user) {
  set.entries_.fetch_add(1, std::memory_order_relaxed);
}

static_assert(sizeof(ReadyEntry) == 72, "docs/design.md states an entry's size");

}  // namespace leanchan

#endif  // LEANCHAN_READY_SET_H_
