// SPDX-License-Identifier: MIT
#include "designs.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "leanchan/channel.h"
#include "tokio_style/channel.h"

namespace leanchan::report {
namespace {

std::int64_t ceil_div(std::size_t a, std::size_t b) {
  return static_cast<std::int64_t>((a + b - 1) / b);
}

// docs/memory.md / docs/design.md "Memory figures", for 1-aligned messages.
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

template <std::size_t S, std::size_t B>
MemoryRow leanchan_row(std::size_t capacity) {
  MemoryRow row = measure_create_fill_drain<Message<S>>(
      [](std::size_t c) { return leanchan::channel<Message<S>, B>(c); }, capacity);
  row.predicted = leanchan_prediction(S, B, capacity);
  return row;
}

template <std::size_t B>
MemoryRow leanchan_measure(std::size_t message_bytes, std::size_t capacity) {
  switch (message_bytes) {
    case 8: return leanchan_row<8, B>(capacity);
    case 24: return leanchan_row<24, B>(capacity);
    case 128: return leanchan_row<128, B>(capacity);
    case 250: return leanchan_row<250, B>(capacity);
    default: return leanchan_row<1024, B>(capacity);
  }
}

template <std::size_t B>
Design leanchan_design() {
  Design design;
  design.name = absl::StrCat("leanchan-b", B);
  design.block_size = B;
  design.formulas = absl::StrCat("b = min(", B, ", C); create 64; fill 64 + ceil(C/b)·(16 + ",
                                 "b·S); drain 64 + 16 + b·S");
  design.measure = [](std::size_t message_bytes, std::size_t capacity) {
    MemoryRow row = leanchan_measure<B>(message_bytes, capacity);
    row.design = absl::StrCat("leanchan-b", B);
    row.message_bytes = message_bytes;
    row.capacity = capacity;
    return row;
  };
  design.many_channels = [](std::size_t channels, std::size_t capacity, std::size_t burst,
                            Retention retention) {
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [retention](std::size_t c) { return leanchan::channel<Message<24>, B>(c, retention); },
        channels, capacity, burst);
    row.design = absl::StrCat("leanchan-b", B);
    row.retain = retain_name(retention);
    return row;
  };
  design.has_retention = true;
  return design;
}

// leanchan as `channel<T>(capacity)` makes it: the default block size for
// each message type (leanchan::default_block_size, leanchan/fwd.h).
template <std::size_t S>
MemoryRow leanchan_default_row(std::size_t capacity) {
  return leanchan_row<S, leanchan::default_block_size<Message<S>>>(capacity);
}

Design leanchan_default_design() {
  Design design;
  design.name = "leanchan-default";
  design.block_size = 0;  // depends on the message size
  design.formulas = absl::StrCat(
      "B = default_block_size<T> (8 B: ", leanchan::default_block_size<Message<8>>,
      ", 24 B: ", leanchan::default_block_size<Message<24>>, ", 128 B: ",
      leanchan::default_block_size<Message<128>>, ", 250 B: ",
      leanchan::default_block_size<Message<250>>, ", 1024 B: ",
      leanchan::default_block_size<Message<1024>>,
      "); b = min(B, C); create 64; fill 64 + ceil(C/b)·(16 + b·S); drain 64 + 16 + b·S");
  design.measure = [](std::size_t message_bytes, std::size_t capacity) {
    MemoryRow row;
    switch (message_bytes) {
      case 8: row = leanchan_default_row<8>(capacity); break;
      case 24: row = leanchan_default_row<24>(capacity); break;
      case 128: row = leanchan_default_row<128>(capacity); break;
      case 250: row = leanchan_default_row<250>(capacity); break;
      default: row = leanchan_default_row<1024>(capacity); break;
    }
    row.design = "leanchan-default";
    row.message_bytes = message_bytes;
    row.capacity = capacity;
    return row;
  };
  design.many_channels = [](std::size_t channels, std::size_t capacity, std::size_t burst,
                            Retention retention) {
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [retention](std::size_t c) { return leanchan::channel<Message<24>>(c, retention); },
        channels, capacity, burst);
    row.design = "leanchan-default";
    row.retain = retain_name(retention);
    return row;
  };
  design.has_retention = true;
  return design;
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
                            Retention) {
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [](std::size_t c) { return tokio_style::channel<Message<24>>(c); }, channels, capacity,
        burst);
    row.design = "tokio-style";
    return row;
  };
  return design;
}

}  // namespace

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
