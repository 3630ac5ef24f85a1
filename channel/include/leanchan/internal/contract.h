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

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_CONTRACT_H_
