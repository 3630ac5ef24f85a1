// SPDX-License-Identifier: MIT
#include "leanchan/status.h"

namespace leanchan {

std::string_view to_string(SendStatus status) noexcept {
  switch (status) {
    case SendStatus::kOk: return "ok";
    case SendStatus::kFull: return "full";
    case SendStatus::kClosed: return "closed";
    case SendStatus::kTimedOut: return "timed out";
    case SendStatus::kExceedsCapacity: return "exceeds capacity";
    case SendStatus::kNoMemory: return "no memory";
  }
  return "unknown";
}

std::string_view to_string(RecvStatus status) noexcept {
  switch (status) {
    case RecvStatus::kOk: return "ok";
    case RecvStatus::kEmpty: return "empty";
    case RecvStatus::kDisconnected: return "disconnected";
    case RecvStatus::kTimedOut: return "timed out";
  }
  return "unknown";
}

std::string_view to_string(RoomStatus status) noexcept {
  switch (status) {
    case RoomStatus::kRoom: return "room";
    case RoomStatus::kClosed: return "closed";
    case RoomStatus::kArmed: return "armed";
    case RoomStatus::kHoldsSlot: return "holds a slot";
  }
  return "unknown";
}

std::string_view to_string(PollStatus status) noexcept {
  switch (status) {
    case PollStatus::kOk: return "ok";
    case PollStatus::kEmpty: return "empty";
    case PollStatus::kBusy: return "busy";
    case PollStatus::kDisconnected: return "disconnected";
  }
  return "unknown";
}

}  // namespace leanchan
