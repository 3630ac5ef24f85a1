// SPDX-License-Identifier: MIT
// leanchan/internal/block.h: a block of slots and its 16-byte header.
//
// A block is one heap allocation: a BlockHeader followed by BlockSize slots of
// raw storage for T. Slot i holds a live T exactly when bit i of `ready` is
// set and the receiver has not taken it yet (docs/design.md, "Vocabulary").
//
//   offset 0   next    BlockHeader*   successor in the list (list lock)
//   offset 8   ready   atomic<u32>    bit i: slot i written and published
//   offset 12  number  atomic<u32>    [25..0]  block number mod 2^26 (its "tag")
//                                     [30..26] slots the receiver took here
//                                              and kept the permits of
//                                              (0..b-1; see "consumed")
//                                     [31]     a sender waits for a permit
//   offset 16  slots   b * sizeof(T), b = min(BlockSize, capacity)
//                      (16 grows only for alignof(T) > 16)
#ifndef LEANCHAN_INTERNAL_BLOCK_H_
#define LEANCHAN_INTERNAL_BLOCK_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>

#include "leanchan/internal/atomic.h"

namespace leanchan::internal {

// Block numbers are stored modulo 2^26. Two blocks compared by the channel are
// never more than ceil(kMaxCapacity / 1) + 2 = 2^24 + 2 apart, far below 2^25,
// so the wrapped difference tells order without ambiguity.
inline constexpr std::uint32_t kTagBits = 26;
inline constexpr std::uint32_t kTagMask = (std::uint32_t{1} << kTagBits) - 1;
// The rest of a block's `number` word: the receiver's count of slots taken
// and not yet given back to the bound (5 bits: a block's last slot is
// never counted there, see ChannelOps::try_take), and the "a sender waits"
// bit (GiveBack::collect_owed_locked).
inline constexpr std::uint32_t kConsumedShift = kTagBits;
inline constexpr std::uint32_t kConsumedUnit = std::uint32_t{1} << kConsumedShift;
inline constexpr std::uint32_t kConsumedMask = std::uint32_t{31} << kConsumedShift;
inline constexpr std::uint32_t kWantBit = std::uint32_t{1} << 31;
static_assert(kConsumedMask < kWantBit && (kConsumedMask & kTagMask) == 0);

// The fields of a block's `number` word.
struct BlockNumber {
  static constexpr std::uint32_t tag(std::uint32_t word) noexcept { return word & kTagMask; }
  // Slots the receiver took in the block and has not given the permits of.
  static constexpr std::uint32_t taken(std::uint32_t word) noexcept {
    return (word & kConsumedMask) >> kConsumedShift;
  }
  static constexpr bool wanted(std::uint32_t word) noexcept { return (word & kWantBit) != 0; }
};

constexpr std::uint32_t block_tag(std::uint64_t block_number) noexcept {
  return static_cast<std::uint32_t>(block_number) & kTagMask;
}
// How many blocks `later` lies after `earlier` (0 if equal). Meaningful while
// the true distance is below 2^25; a "negative" distance shows as >= 2^25.
constexpr std::uint32_t tag_distance(std::uint32_t later, std::uint32_t earlier) noexcept {
  return (later - earlier) & kTagMask;
}
constexpr bool tag_is_after(std::uint32_t later, std::uint32_t earlier) noexcept {
  const std::uint32_t d = tag_distance(later, earlier);
  return d != 0 && d < (std::uint32_t{1} << (kTagBits - 1));
}

struct BlockHeader {
  // Guarded by the list lock: written only by its holder, read only by it
  // (and by the last handle at destruction, when no other thread remains).
  BlockHeader* next = nullptr;
  // Writers: a sender sets its slot's bit with fetch_or (release, publishing
  // the value); the list-lock holder zeroes it when the block is reused.
  // Reader: the receiver, with acquire, before it moves a value out.
  Atomic<std::uint32_t> ready{0};
  // The tag (low 26 bits): written only under the list lock (release), when
  // the block is numbered, which also zeroes the other fields (or sets the
  // want bit). Read by the receiver without the lock (acquire) and by
  // senders only under the lock.
  // The consumed count: the receiver adds one (an RMW) for each slot it
  // takes in its current block, except the last; list-lock holders read it
  // to give those slots' permits back (GiveBack).
  // The want bit: set under the list lock (an RMW) while a sender waits;
  // the receiver's add returns it.
  Atomic<std::uint32_t> number{0};

  // The tag alone (the other fields masked off: BlockNumber).
  std::uint32_t tag(std::memory_order order) const noexcept {
    return BlockNumber::tag(number.load(order));
  }
};
static_assert(sizeof(BlockHeader) == 16,
              "leanchan: a block header must stay 16 bytes (docs/memory.md)");

// The shape of a block for one (T, BlockSize): what the non-templated list code
// needs to allocate, free and index blocks.
struct BlockLayout {
  std::uint32_t slots;    // min(BlockSize, capacity)
  std::size_t bytes;      // header + slots, the exact request to operator new
  std::size_t alignment;  // max(alignof(BlockHeader), alignof(T))
  // Where blocks come from: null for the global operator new (the default).
  std::pmr::memory_resource* resource = nullptr;
};

template <class T, std::size_t BlockSize>
struct BlockShape {
  static constexpr std::size_t kAlignment = std::max(alignof(BlockHeader), alignof(T));
  // The slots start right after the header, or at the next multiple of alignof(T).
  static constexpr std::size_t kSlotOffset =
      (sizeof(BlockHeader) + alignof(T) - 1) / alignof(T) * alignof(T);

  // The layout of a block of `slots` slots (1..BlockSize).
  static constexpr BlockLayout layout_for(std::uint32_t slots,
                                          std::pmr::memory_resource* resource) noexcept {
    return {slots, kSlotOffset + slots * sizeof(T), kAlignment, resource};
  }

  static T* slot(BlockHeader* block, std::size_t index) noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(block) + kSlotOffset +
                                index * sizeof(T));
  }
};

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_BLOCK_H_
