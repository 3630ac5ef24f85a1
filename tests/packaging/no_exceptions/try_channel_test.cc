// SPDX-License-Identifier: MIT
// Built with -fno-exceptions: try_channel reports bad arguments and a failed
// allocation as values, and the channel it makes works. (channel() would
// have to throw.) A plain program: it prints "N passed, N failed".
#include <cstdio>
#include <memory_resource>

#include "leanchan/channel.h"

std::pmr::memory_resource* failing_resource();  // failing_resource.cc

namespace {

int passed = 0;
int failed = 0;
void check(bool ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAILED: %s\n", what);
  }
}

}  // namespace

int main() {
  check(leanchan::try_channel<int>(0).error == leanchan::ChannelError::kZeroCapacity, "capacity 0");
  check(leanchan::try_channel<int>(leanchan::kMaxCapacity + 1).error ==
            leanchan::ChannelError::kCapacityTooLarge,
        "capacity above the maximum");
  check(leanchan::try_channel<int>(4, {leanchan::Retention::keep(1000), nullptr}).error ==
            leanchan::ChannelError::kRetentionTooLarge,
        "retention too large");
  const auto no_memory = leanchan::try_channel<int>(4, {leanchan::Retention{}, failing_resource()});
  check(no_memory.error == leanchan::ChannelError::kNoMemory && !no_memory.ends,
        "a failed control block is kNoMemory");
  check(leanchan::to_string(leanchan::ChannelError::kNoMemory) ==
            "the control block could not be allocated",
        "errors have names");
  auto made = leanchan::try_channel<int>(4);
  check(made.ok() && made.ends.has_value(), "a valid channel is made");
  if (made.ends) {
    auto& [tx, rx] = *made.ends;
    check(tx.try_send(7).ok(), "try_send");
    check(rx.try_recv().value() == 7, "try_recv");
    check(rx.memory_usage() == 64 + 16 + 4 * sizeof(int), "memory figures unchanged");
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
