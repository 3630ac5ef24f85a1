// SPDX-License-Identifier: MIT
#include "leanchan/ready_set.h"

#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif

#include <cerrno>
#include <cstdint>
#include <system_error>

#include "leanchan/internal/contract.h"

namespace leanchan {
thread_local ReadySet::DrainScope* ReadySet::innermost_drain_ = nullptr;

ReadyEntry::~ReadyEntry() {
  // The drains of this thread may hold the entry (being visited, or in a
  // batch's rest) whatever its state; the stack holds it only while it is
  // marked queued and not visited. Nothing fires it now, and whatever
  // silenced its source (clear_notifier waits out a running callback)
  // ordered the last fire before this; acquire reads that fire's fetch_or
  // whole all the same.
  const bool in_drain = ReadySet::DrainScope::forget(this);
  if (!in_drain && state_.load(std::memory_order_acquire) == kQueued) set_->unlink_queued(this);
  set_->entries_.fetch_sub(1, std::memory_order_relaxed);  // see ReadySet::entries_
}

ReadySet::DrainScope::DrainScope(ReadySet* drained, ReadyEntry* batch) noexcept
    : set(drained), rest(batch), outer_(innermost_drain_) {
  innermost_drain_ = this;
}

ReadySet::DrainScope::~DrainScope() {
  innermost_drain_ = outer_;
  // Both are null unless visit threw.
  if (visiting != nullptr) {
    // Queued again, and on the stack (while visited, a fire pushes
    // nothing). relaxed: the byte stays non-zero, so no other thread acts
    // on this write (a fire pushes nothing, no other thread may destroy
    // the entry); a fire's release sequence continues through this RMW to
    // the next drain's exchange; push's CAS publishes the link.
    (void)visiting->state_.exchange(ReadyEntry::kQueued, std::memory_order_relaxed);
    set->push(visiting);
  }
  if (rest != nullptr) set->requeue(rest);
}

bool ReadySet::DrainScope::forget(ReadyEntry* entry) noexcept {
  bool in_drain = false;
  for (DrainScope* scope = innermost_drain_; scope != nullptr; scope = scope->outer_) {
    if (scope->set != entry->set_) continue;
    if (scope->visiting == entry) {
      scope->visiting = nullptr;
      in_drain = true;  // visited, so on no stack
    }
    // The rest's links are stable: its entries are marked queued, so no
    // fire pushes (relinks) them.
    for (ReadyEntry** link = &scope->rest; !in_drain && *link != nullptr; link = &(*link)->next_) {
      if (*link == entry) {
        *link = entry->next_;
        in_drain = true;
        break;  // *link may be null now: no step past it
      }
    }
  }
  return in_drain;
}

void ReadyEntry::fire(void* self) noexcept {
  auto* entry = static_cast<ReadyEntry*>(self);
  // acq_rel: only the first fire after a visit began queues the entry; its
  // release half is what drain's exchange acquires (the source's state,
  // written before it fired, is then seen by the visit), directly or
  // through end_visit's RMW, which continues its release sequence. While
  // the entry is visited it is on no stack: end_visit pushes it.
  if (entry->state_.fetch_or(kQueued, std::memory_order_acq_rel) == 0) entry->set_->push(entry);
}

void ReadySet::end_visit(ReadyEntry* entry) noexcept {
  // release: a thread whose queued() reads the 0 written here sees every
  // access of the visit before it destroys the entry. No acquire: the push
  // writes only next_, which no fire wrote, and the next drain's exchange
  // synchronizes with a fire read here through the fire's release
  // sequence, which this RMW continues whatever its order.
  const std::uint8_t before = entry->state_.fetch_and(
      static_cast<std::uint8_t>(~ReadyEntry::kVisiting), std::memory_order_release);
  // Fired during the visit: still marked queued, so that no fire pushes it
  // and no other thread destroys it; it goes on the stack here.
  if ((before & ReadyEntry::kQueued) != 0) push(entry);
}

// Linux: one eventfd (a counter). Elsewhere: a non-blocking pipe, whose
// read end is the fd the loop polls and whose write end signals.
#if defined(__linux__)
ReadySet::ReadySet() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), signal_fd_(fd_) {
  if (fd_ < 0)
    throw std::system_error(errno, std::generic_category(), "leanchan::ReadySet: eventfd");
}

ReadySet::~ReadySet() {
  check_no_entries();
  ::close(fd_);
}
#else
ReadySet::ReadySet() {
  int ends[2];
  if (::pipe(ends) != 0) {
    throw std::system_error(errno, std::generic_category(), "leanchan::ReadySet: pipe");
  }
  for (int end : ends) {
    ::fcntl(end, F_SETFL, ::fcntl(end, F_GETFL) | O_NONBLOCK);
    ::fcntl(end, F_SETFD, FD_CLOEXEC);
  }
  fd_ = ends[0];
  signal_fd_ = ends[1];
}

ReadySet::~ReadySet() {
  check_no_entries();
  ::close(fd_);
  ::close(signal_fd_);
}
#endif

void ReadySet::check_no_entries() const noexcept {
  if (entries_.load(std::memory_order_relaxed) != 0)
    internal::contract_violation("ReadySet destroyed while an entry made on it is alive");
}

void ReadySet::push(ReadyEntry* entry) noexcept {
  ReadyEntry* head = head_.load(std::memory_order_relaxed);
  do {
    entry->next_ = head;
    // release: the loop's take_all (acquire) sees the link and the entry.
  } while (!head_.compare_exchange_weak(head, entry, std::memory_order_release,
                                        std::memory_order_relaxed));
  if (head == nullptr) {
    // The queue was empty: make the fd readable. (A full eventfd counter
    // cannot happen: the loop reads it to zero on every drain.)
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(signal_fd_, &one, sizeof(one));
  }
}

void ReadySet::requeue(ReadyEntry* first) noexcept {
  while (first != nullptr) {
    ReadyEntry* const next = first->next_;  // read before push relinks it
    // Still marked queued: a fire meanwhile found it so and pushed nothing.
    push(first);
    first = next;
  }
}

void ReadySet::unlink_queued(ReadyEntry* entry) noexcept {
  // The loop's thread is the only one that takes from the stack, so taking
  // it whole here races only with pushes, which start a new one. acquire:
  // as take_all, the links of what was pushed.
  ReadyEntry* newest = head_.exchange(nullptr, std::memory_order_acquire);
  ReadyEntry* oldest = nullptr;  // the others, reversed into arrival order
  while (newest != nullptr) {
    ReadyEntry* const next = newest->next_;
    if (newest != entry) {
      newest->next_ = oldest;
      oldest = newest;
    }
    newest = next;
  }
  requeue(oldest);  // oldest first, so they keep their order
}

ReadyEntry* ReadySet::take_all() noexcept {
  // Read the counter first: a push after this read but before the exchange
  // is taken by the exchange; a push after the exchange writes again.
  std::uint64_t count = 0;
  // An eventfd reads to zero at once; a pipe may hold several signals.
  while (::read(fd_, &count, sizeof(count)) == static_cast<ssize_t>(sizeof(count))) {
#if defined(__linux__)
    break;
#endif
  }
  ReadyEntry* newest = head_.exchange(nullptr, std::memory_order_acquire);
  ReadyEntry* oldest = nullptr;
  while (newest != nullptr) {  // reverse into arrival order
    ReadyEntry* next = newest->next_;
    newest->next_ = oldest;
    oldest = newest;
    newest = next;
  }
  return oldest;
}

}  // namespace leanchan
