// SPDX-License-Identifier: MIT
#include "designs.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "leanchan/channel.h"
#include "tokio_style/channel.h"

namespace leanchan::report {
namespace {

std::int64_t ceil_div(std::size_t a, std::size_t b) {
  return static_cast<std::int64_t>((a + b - 1) / b);
}

template <std::size_t S, std::size_t B>
MemoryRow leanchan_row(std::size_t capacity) {
  MemoryRow row = measure_create_fill_drain<Message<S>>(
      [](std::size_t c) { return leanchan::channel<Message<S>, B>(c); }, capacity);
  row.predicted = leanchan_prediction(S, B, capacity);
  return row;
}

// The block size a leanchan design uses for S-byte messages: a fixed one,
// or the library's default (what channel<T>(capacity) makes).
template <std::size_t B>
struct FixedBlocks {
  template <std::size_t S>
  static constexpr std::size_t of = B;
};
struct DefaultBlocks {
  template <std::size_t S>
  static constexpr std::size_t of = leanchan::default_block_size<Message<S>>;
};

template <class Blocks>
MemoryRow leanchan_measure(std::size_t message_bytes, std::size_t capacity) {
  switch (message_bytes) {
    case 8: return leanchan_row<8, Blocks::template of<8>>(capacity);
    case 24: return leanchan_row<24, Blocks::template of<24>>(capacity);
    case 128: return leanchan_row<128, Blocks::template of<128>>(capacity);
    case 250: return leanchan_row<250, Blocks::template of<250>>(capacity);
    default: return leanchan_row<1024, Blocks::template of<1024>>(capacity);
  }
}

// `block_size`: the fixed block size, or 0 when it depends on the message.
template <class Blocks>
Design leanchan_design(const std::string& name, std::size_t block_size, std::string formulas) {
  Design design;
  design.name = name;
  design.block_size = block_size;
  design.formulas = std::move(formulas);
  design.measure = [name](std::size_t message_bytes, std::size_t capacity) {
    MemoryRow row = leanchan_measure<Blocks>(message_bytes, capacity);
    row.design = name;
    row.message_bytes = message_bytes;
    row.capacity = capacity;
    return row;
  };
  design.many_channels = [name](std::size_t channels, std::size_t capacity, std::size_t burst,
                                Retention retention, std::pmr::memory_resource* memory) {
    constexpr std::size_t kBlocks = Blocks::template of<24>;
    const leanchan::ChannelOptions options{.retention = retention, .memory = memory};
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [options](std::size_t c) { return leanchan::channel<Message<24>, kBlocks>(c, options); },
        channels, capacity, burst);
    row.design = name;
    row.retain = retain_name(retention);
    return row;
  };
  design.has_retention = true;
  design.has_memory_resource = true;
  return design;
}

template <std::size_t B>
Design leanchan_design() {
  return leanchan_design<FixedBlocks<B>>(
      absl::StrCat("leanchan-b", B), B,
      absl::StrCat("b = min(", B, ", C); create 64; fill 64 + ceil(C/b)·(16 + ",
                   "b·S); drain 64 + 16 + b·S"));
}

// leanchan as channel<T>(capacity) makes it (leanchan::default_block_size).
Design leanchan_default_design() {
  return leanchan_design<DefaultBlocks>(
      "leanchan-default", 0,
      absl::StrCat("B = default_block_size<T> (8 B: ", DefaultBlocks::of<8>,
                   ", 24 B: ", DefaultBlocks::of<24>, ", 128 B: ", DefaultBlocks::of<128>,
                   ", 250 B: ", DefaultBlocks::of<250>, ", 1024 B: ", DefaultBlocks::of<1024>,
                   "); b = min(B, C); create 64; fill 64 + ceil(C/b)·(16 + b·S); drain 64 + "
                   "16 + b·S"));
}

// Tokio 1.24 (docs/tokio_style.md sections 4 and 6): a 176-byte Chan, 32-slot blocks
// of 32 + 32*S bytes, the first made at creation, up to 3 kept after a drain.
Prediction tokio_prediction(std::size_t message_bytes, std::size_t capacity) {
  const auto block = static_cast<std::int64_t>(32 + 32 * message_bytes);
  const std::int64_t blocks = std::max<std::int64_t>(1, ceil_div(capacity, 32));
  Prediction p;
  p.create = 176 + block;
  p.fill = 176 + blocks * block;
  p.drain = 176 + (1 + std::min<std::int64_t>(3, blocks - 1)) * block;
  return p;
}

template <std::size_t S>
MemoryRow tokio_row(std::size_t capacity) {
  MemoryRow row = measure_create_fill_drain<Message<S>>(
      [](std::size_t c) { return tokio_style::channel<Message<S>>(c); }, capacity);
  row.predicted = tokio_prediction(S, capacity);
  return row;
}

Design tokio_design() {
  Design design;
  design.name = "tokio-style";
  design.block_size = 32;
  design.formulas =
      "create 176 + 32 + 32·S; fill 176 + max(1, ceil(C/32))·(32 + 32·S); drain 176 + "
      "(1 + min(3, ceil(C/32) - 1))·(32 + 32·S)";
  design.measure = [](std::size_t message_bytes, std::size_t capacity) {
    MemoryRow row;
    switch (message_bytes) {
      case 8: row = tokio_row<8>(capacity); break;
      case 24: row = tokio_row<24>(capacity); break;
      case 128: row = tokio_row<128>(capacity); break;
      case 250: row = tokio_row<250>(capacity); break;
      default: row = tokio_row<1024>(capacity); break;
    }
    row.design = "tokio-style";
    row.message_bytes = message_bytes;
    row.capacity = capacity;
    return row;
  };
  design.many_channels = [](std::size_t channels, std::size_t capacity, std::size_t burst,
                            Retention, std::pmr::memory_resource*) {
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [](std::size_t c) { return tokio_style::channel<Message<24>>(c); }, channels, capacity,
        burst);
    row.design = "tokio-style";
    return row;
  };
  return design;
}

}  // namespace

Prediction leanchan_prediction(std::size_t message_bytes, std::size_t block_size,
                               std::size_t capacity) {
  block_size = std::min(block_size, capacity);  // b = min(B, C) slots per block
  const auto block = static_cast<std::int64_t>(16 + block_size * message_bytes);
  Prediction p;
  p.create = 64;
  p.fill = 64 + ceil_div(capacity, block_size) * block;
  p.drain = 64 + block;
  return p;
}

std::string retain_name(Retention retention) {
  if (retention == Retention::kKeepNone) return "none";
  if (retention == Retention::kKeepOne) return "one";
  return std::to_string(retention.blocks());
}

const std::vector<std::size_t>& supported_message_sizes() {
  static const std::vector<std::size_t> sizes = {8, 24, 128, 250, 1024};
  return sizes;
}

const std::vector<Design>& all_designs() {
  static const std::vector<Design> designs = [] {
    std::vector<Design> list;
    list.push_back(leanchan_default_design());  // what channel<T>(capacity) makes
    list.push_back(leanchan_design<1>());
    list.push_back(leanchan_design<2>());
    list.push_back(leanchan_design<4>());
    list.push_back(leanchan_design<8>());
    list.push_back(leanchan_design<16>());
    list.push_back(leanchan_design<32>());
    list.push_back(tokio_design());
    return list;
  }();
  return designs;
}

}  // namespace leanchan::report
