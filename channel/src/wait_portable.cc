// SPDX-License-Identifier: MIT
// The portable wait backend (see leanchan/internal/futex.h for the
// contract): for systems without Linux futexes, or chosen on Linux with
// -DLEANCHAN_WAIT_BACKEND=portable. Waiters park on one of a fixed table of
// condition variables chosen by the word's address (a "parking lot"), so a
// word still costs nothing but itself.
//
// No wake-up is lost: a waiter compares the word under its bucket's mutex
// and only then sleeps (releasing the mutex atomically); a waker changes the
// word first, then takes the same mutex before notifying, so the waiter
// either sees the new value or is already asleep and gets the notification.
// Words that share a bucket wake each other spuriously, which every caller
// tolerates (it re-checks in a loop).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "leanchan/internal/futex.h"

namespace leanchan::internal {
namespace {

struct Bucket {
  std::mutex mutex;
  std::condition_variable sleepers;
};

constexpr std::size_t kBuckets = 64;

Bucket& bucket_of(const void* word) noexcept {
  static Bucket buckets[kBuckets];
  const auto address = reinterpret_cast<std::uintptr_t>(word);
  return buckets[(address >> 4) % kBuckets];  // words are at least 4-byte aligned
}

}  // namespace

bool futex_wait(Atomic<std::uint32_t>& word, std::uint32_t expected,
                const Deadline* deadline) noexcept {
  Bucket& bucket = bucket_of(&word);
  std::unique_lock<std::mutex> lock(bucket.mutex);
  // seq_cst: as the kernel's comparison; the caller's protocol decides.
  if (word.load(std::memory_order_seq_cst) != expected) return true;
  if (deadline == nullptr || *deadline == Deadline::max()) {
    bucket.sleepers.wait(lock);
    return true;
  }
  return bucket.sleepers.wait_until(lock, *deadline) == std::cv_status::no_timeout ||
         std::chrono::steady_clock::now() < *deadline;
}

void futex_wake(Atomic<std::uint32_t>& word, int /*count: every sleeper of the bucket*/) noexcept {
  Bucket& bucket = bucket_of(&word);
  { std::lock_guard<std::mutex> lock(bucket.mutex); }
  bucket.sleepers.notify_all();
}

}  // namespace leanchan::internal
