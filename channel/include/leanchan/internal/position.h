// SPDX-License-Identifier: MIT
// leanchan/internal/position.h: message positions, counted modulo M.
//
// Every message has a position, claimed from the permit word's position
// field (permit_word.h). That field has 35 bits, so positions wrap: at
// M = 2^35 when b, the channel's slots per block (1..32), is a power of
// two (the field's own wrap: a claim is then a plain fetch_add), else at
// M = b * 2^30 (< 2^35). Block numbers, position / b, then run over
// 2^35 / b or 2^30 values, multiples of the 2^26 block tags (block.h), so
// a block's tag stays continuous across the wrap: nothing is rebuilt. Every position the
// channel keeps (the claim field, the receiver's index, the returned
// position) is a value in [0, M), and no two of them are ever more than
// kMaxCapacity + b apart, so their difference modulo M is exact.
#ifndef LEANCHAN_INTERNAL_POSITION_H_
#define LEANCHAN_INTERNAL_POSITION_H_

#include <cstdint>

namespace leanchan::internal {

inline constexpr std::uint32_t kBlockNumberBits = 30;

struct Positions {
  static constexpr unsigned kPositionBits = 35;
  // Whether positions wrap with the 35-bit field itself (b a power of two).
  static constexpr bool wraps_with_field(std::uint64_t slots) noexcept {
    return (slots & (slots - 1)) == 0;
  }
  // M for blocks of `slots` slots.
  static constexpr std::uint64_t modulus(std::uint64_t slots) noexcept {
    return wraps_with_field(slots) ? std::uint64_t{1} << kPositionBits : slots << kBlockNumberBits;
  }
  // The position after `position`, with M given (`m`: modulus(slots),
  // which a caller keeps, so that a step tests no block size).
  static constexpr std::uint64_t next_modulo(std::uint64_t position, std::uint64_t m) noexcept {
    return position + 1 == m ? 0 : position + 1;
  }
  // `position` + `count` (count < M), modulo M.
  static constexpr std::uint64_t add(std::uint64_t position, std::uint64_t count,
                                     std::uint64_t slots) noexcept {
    const std::uint64_t sum = position + count;
    return sum >= modulus(slots) ? sum - modulus(slots) : sum;
  }
  // How far `later` lies after `earlier`, modulo M (exact while the true
  // distance is below M).
  static constexpr std::uint64_t distance(std::uint64_t later, std::uint64_t earlier,
                                          std::uint64_t slots) noexcept {
    return later >= earlier ? later - earlier : later + modulus(slots) - earlier;
  }
  // The first position of the block after the one holding `position`
  // (0 after the last block).
  static constexpr std::uint64_t next_boundary(std::uint64_t position,
                                               std::uint64_t slots) noexcept {
    const std::uint64_t boundary = (position / slots + 1) * slots;
    return boundary == modulus(slots) ? 0 : boundary;
  }
};

static_assert(Positions::modulus(32) == std::uint64_t{1} << 35 &&
              Positions::modulus(1) == std::uint64_t{1} << 35 &&
              Positions::modulus(24) == std::uint64_t{24} << 30);
static_assert(Positions::next_modulo(Positions::modulus(3) - 1, Positions::modulus(3)) == 0 &&
              Positions::next_modulo(5, Positions::modulus(3)) == 6);
static_assert(Positions::distance(1, Positions::modulus(5) - 2, 5) == 3);
static_assert(Positions::next_boundary(Positions::modulus(7) - 3, 7) == 0);
static_assert(Positions::next_boundary(14, 7) == 21 && Positions::next_boundary(15, 7) == 21);

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_POSITION_H_
