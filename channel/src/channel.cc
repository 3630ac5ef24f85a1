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

ChannelError check_channel_arguments(std::size_t capacity, Retention retention) noexcept {
  if (capacity == 0) return ChannelError::kZeroCapacity;
  if (capacity > kMaxCapacity) return ChannelError::kCapacityTooLarge;
  if (retention.blocks() > Retention::kMaxKeptBlocks) return ChannelError::kRetentionTooLarge;
  return ChannelError::kOk;
}

}  // namespace leanchan::internal

namespace leanchan {

std::string_view to_string(ChannelError error) noexcept {
  switch (error) {
    case ChannelError::kOk: return "ok";
    case ChannelError::kZeroCapacity: return "capacity must be at least 1";
    case ChannelError::kCapacityTooLarge: return "capacity exceeds leanchan::kMaxCapacity";
    case ChannelError::kRetentionTooLarge: return "Retention::keep(n) keeps too many blocks";
    case ChannelError::kNoMemory: return "the control block could not be allocated";
  }
  return "unknown";
}

}  // namespace leanchan
