#include "designs.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "leanchan/channel.h"

namespace leanchan::report {
namespace {

std::int64_t ceil_div(std::size_t a, std::size_t b) { return static_cast<std::int64_t>((a + b - 1) / b); }

// DESIGN.md 2 / docs/design.md "Memory figures", for 1-aligned messages.
Prediction leanchan_prediction(std::size_t message_bytes, std::size_t block_size,
                               std::size_t capacity) {
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
  design.formulas = absl::StrCat("create 64; fill 64 + ceil(C/", B, ")·(16 + ", B,
                                 "·S); drain 64 + 16 + ", B, "·S");
  design.measure = [](std::size_t message_bytes, std::size_t capacity) {
    MemoryRow row = leanchan_measure<B>(message_bytes, capacity);
    row.design = absl::StrCat("leanchan-b", B);
    row.message_bytes = message_bytes;
    row.capacity = capacity;
    return row;
  };
  design.many_channels = [](std::size_t channels, std::size_t capacity, std::size_t burst) {
    ManyChannelsRow row = measure_many_channels<Message<24>>(
        [](std::size_t c) { return leanchan::channel<Message<24>, B>(c); }, channels, capacity,
        burst);
    row.design = absl::StrCat("leanchan-b", B);
    return row;
  };
  return design;
}

}  // namespace

const std::vector<std::size_t>& supported_message_sizes() {
  static const std::vector<std::size_t> sizes = {8, 24, 128, 250, 1024};
  return sizes;
}

const std::vector<Design>& all_designs() {
  static const std::vector<Design> designs = [] {
    std::vector<Design> list;
    list.push_back(leanchan_design<1>());
    list.push_back(leanchan_design<2>());
    list.push_back(leanchan_design<4>());
    list.push_back(leanchan_design<8>());
    list.push_back(leanchan_design<16>());
    list.push_back(leanchan_design<32>());
    return list;
  }();
  return designs;
}

}  // namespace leanchan::report
