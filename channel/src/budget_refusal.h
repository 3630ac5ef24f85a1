// SPDX-License-Identifier: MIT
// budget_refusal.h (private to the library): the calling thread's record
// of which MemoryBudget refused its most recent allocation, the one
// MemoryBudget::refused_on_this_thread() reads.
#ifndef LEANCHAN_SRC_BUDGET_REFUSAL_H_
#define LEANCHAN_SRC_BUDGET_REFUSAL_H_

namespace leanchan::internal {

// Keeps the calling thread's record across work it does for another
// sender: a thread that frees a slot moves a waiting sender's value in
// (Semaphore::wake_nodes), allocating that sender's block on this thread;
// whether that allocation succeeds or is refused is the other sender's
// business, and must not overwrite this thread's own record (a send that
// returned kNoMemory because a budget refused it then read as a real
// allocation failure).
class KeepRefusalRecord {
 public:
  KeepRefusalRecord() noexcept;
  ~KeepRefusalRecord();
  KeepRefusalRecord(const KeepRefusalRecord&) = delete;
  KeepRefusalRecord& operator=(const KeepRefusalRecord&) = delete;

 private:
  const void* saved_;
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_SRC_BUDGET_REFUSAL_H_
