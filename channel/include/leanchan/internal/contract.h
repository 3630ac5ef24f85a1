// SPDX-License-Identifier: MIT
// leanchan/internal/contract.h: the response to a misuse the channel can
// see but cannot recover from (a call whose precondition the caller did not
// check, where going on would lose a message, hang, or touch freed
// memory): a message on stderr and std::abort(), in every build, not only
// under assert(). Each check is one predictable branch off the hot path's
// fall-through.
#ifndef LEANCHAN_INTERNAL_CONTRACT_H_
#define LEANCHAN_INTERNAL_CONTRACT_H_

#include <cstdio>
#include <cstdlib>

namespace leanchan::internal {

// Prints "leanchan: <message>" and aborts. Never returns.
[[noreturn, gnu::cold, gnu::noinline]] inline void contract_violation(
    const char* message) noexcept {
  std::fprintf(stderr, "leanchan: %s\n", message);
  std::abort();
}

#ifdef LEANCHAN_EXPLORE
namespace explore {
void report_violation(const char* what) noexcept;  // leanchan/internal/explore.h
}  // namespace explore
#endif

// For a check in a destructor, where the schedule explorer's build can
// carry on: there the violation fails the schedule being explored (as the
// explorer's own checks do) instead of the whole process, so that a
// mutant caught by it is reported like the others. Every other build
// aborts, as contract_violation.
inline void contract_violation_in_destructor(const char* message) noexcept {
#ifdef LEANCHAN_EXPLORE
  explore::report_violation(message);
#else
  contract_violation(message);
#endif
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CONTRACT_H_
