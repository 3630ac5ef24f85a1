// SPDX-License-Identifier: MIT
#include "leanchan/channel.h"

#include <stdexcept>
#include <string>

namespace leanchan::internal {

void validate_capacity(std::size_t capacity) {
  if (capacity == 0) {
    throw std::invalid_argument("leanchan::channel: capacity must be at least 1, got 0");
  }
  if (capacity > kMaxCapacity) {
    throw std::invalid_argument("leanchan::channel: capacity " + std::to_string(capacity) +
                                " exceeds leanchan::kMaxCapacity (" + std::to_string(kMaxCapacity) +
                                ")");
  }
}

void validate_retention(Retention retention) {
  if (retention.blocks() > Retention::kMaxKeptBlocks) {
    throw std::invalid_argument("leanchan::channel: Retention::keep(" +
                                std::to_string(retention.blocks()) + ") keeps more than " +
                                std::to_string(Retention::kMaxKeptBlocks) + " blocks");
  }
}

}  // namespace leanchan::internal
