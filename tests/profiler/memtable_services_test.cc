// SPDX-License-Identifier: MIT
// The report's services table (profiler/report/services.h): what one service
// costs, its channel together with what serves it, to the byte, against the
// formula, for every message size and capacity; and the figures docs/results.md
// and docs/memory.md state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "designs.h"
#include "leanchan/channel.h"
#include "leanchan/ready_set.h"
#include "options.h"
#include "services.h"
#if LEANCHAN_REPORT_HAVE_ASIO
#include "services_asio.h"
#endif

namespace {

using leanchan::report::Message;
using leanchan::report::ServiceRow;
using T24 = Message<24>;

const leanchan::report::Service* find_service(const std::string& name) {
  for (const auto& service : leanchan::report::all_services()) {
    if (service.name == name) return &service;
  }
  ADD_FAILURE() << "no service named " << name;
  return nullptr;
}

// B: the slots per block channel<Message<S>>(capacity) uses by default.
std::int64_t default_block(std::size_t s) {
  switch (s) {
    case 8: return leanchan::default_block_size<Message<8>>;
    case 24: return leanchan::default_block_size<Message<24>>;
    case 128: return leanchan::default_block_size<Message<128>>;
    case 250: return leanchan::default_block_size<Message<250>>;
    default: return leanchan::default_block_size<Message<1024>>;
  }
}

// The channel's own bytes, docs/memory.md: b = min(B, C); create 64, fill
// 64 + ceil(C/b)·(16 + b·S), drain 64 + 16 + b·S (a drain keeps one block).
struct ChannelBytes {
  std::int64_t create, fill, drain;
};
ChannelBytes channel_bytes(std::size_t s, std::size_t c) {
  const std::int64_t b = std::min<std::int64_t>(default_block(s), static_cast<std::int64_t>(c));
  const std::int64_t block = 16 + b * static_cast<std::int64_t>(s);
  const std::int64_t blocks = (static_cast<std::int64_t>(c) + b - 1) / b;
  return {64, 64 + blocks * block, 64 + block};
}

constexpr std::size_t kCapacities[] = {1, 2, 16, 32, 100, 1024};

// ReadySet: + ReadyEntry + Sender + Receiver, in every column (arming,
// firing and draining allocate nothing).
TEST(MemtableServices, ReadySetServiceIsItsChannelPlusEntrySenderReceiver) {
  const auto* service = find_service("ReadySet");
  ASSERT_NE(service, nullptr);
  constexpr std::int64_t kHeld = sizeof(leanchan::ReadyEntry) + sizeof(leanchan::Sender<T24>) +
                                 sizeof(leanchan::Receiver<T24>);
  for (std::size_t s : leanchan::report::supported_message_sizes()) {
    for (std::size_t c : kCapacities) {
      SCOPED_TRACE("S=" + std::to_string(s) + " C=" + std::to_string(c));
      const ServiceRow row = service->measure(s, c);
      const ChannelBytes channel = channel_bytes(s, c);
      EXPECT_EQ(row.services, leanchan::report::kServicesPerRow);
      EXPECT_TRUE(row.exact);
      EXPECT_EQ(row.idle, channel.create + kHeld);
      EXPECT_EQ(row.fill, channel.fill + kHeld);
      EXPECT_EQ(row.drain, channel.drain + kHeld);
      EXPECT_TRUE(row.matches());
    }
  }
  if constexpr (sizeof(void*) == 8) {
    // docs/results.md's rows: 72 + 8 + 48 = 128 bytes beside the channel.
    EXPECT_EQ(kHeld, 128);
    const ServiceRow small = service->measure(24, 1);
    EXPECT_EQ(small.idle, 192);
    EXPECT_EQ(small.fill, 232);  // + one block of 1 slot: 16 + 24
    EXPECT_EQ(small.drain, 232);
    const ServiceRow burst = service->measure(24, 16);
    EXPECT_EQ(burst.fill, 592);  // 192 + 16 + 16 · 24
    EXPECT_EQ(burst.drain, 592);
    const ServiceRow deep = service->measure(24, 1024);
    EXPECT_EQ(deep.fill, 25280);  // 192 + 32 · (16 + 32 · 24)
    EXPECT_EQ(deep.drain, 976);   // 192 + 16 + 32 · 24
    const ServiceRow big = service->measure(1024, 1024);
    EXPECT_EQ(big.fill, 1052864);  // 192 + 256 · (16 + 4 · 1024)
    EXPECT_EQ(big.drain, 4304);    // 192 + 16 + 4 · 1024
  }
}

#if LEANCHAN_REPORT_HAVE_ASIO
// leanchan::asio: + Sender + AsyncReceiver + its 8-byte step gate + the
// pending receive's operation in a block of Asio's recycling allocator
// (4·ceil(size/4) + 1), in every column; the fill also holds the one step
// the first message posted (Asio's blocks for one post), gone once served.
TEST(MemtableServices, AsioServiceIsItsChannelPlusObjectGateAndPendingReceive) {
  using leanchan::report::ReceiveOp;
  using leanchan::report::recycled_block_bytes;
  const auto* service = find_service("leanchan::asio");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(recycled_block_bytes(220), 221);
  EXPECT_EQ(recycled_block_bytes(221), 225);
  const std::int64_t op = recycled_block_bytes(sizeof(ReceiveOp<24>));
  const std::int64_t held = static_cast<std::int64_t>(sizeof(leanchan::Sender<T24>) +
                                                      sizeof(leanchan::asio::AsyncReceiver<T24>) +
                                                      sizeof(leanchan::asio::internal::StepGate)) +
                            op;
  const std::int64_t step = leanchan::report::posted_step_bytes();
  EXPECT_GT(step, 0);  // the hook sees Asio's blocks (no aligned_alloc)
  EXPECT_EQ(step, leanchan::report::posted_step_bytes());
  for (std::size_t s : leanchan::report::supported_message_sizes()) {
    for (std::size_t c : kCapacities) {
      SCOPED_TRACE("S=" + std::to_string(s) + " C=" + std::to_string(c));
      const ServiceRow row = service->measure(s, c);
      const ChannelBytes channel = channel_bytes(s, c);
      EXPECT_TRUE(row.exact);
      EXPECT_EQ(row.idle, channel.create + held);
      EXPECT_EQ(row.fill, channel.fill + held + step);
      EXPECT_EQ(row.drain, channel.drain + held);
      EXPECT_TRUE(row.matches());
    }
  }
#if !defined(LEANCHAN_ASIO_USE_BOOST) && LEANCHAN_ASIO_VERSION == 102201 && defined(__x86_64__) && \
    defined(__GLIBCXX__)
  // docs/results.md's rows (Debian 12: Asio 1.22.1, libstdc++, x86-64): 8 + 224 +
  // 8 + 225 = 465 bytes beside the channel; a step of two Asio blocks, 33 +
  // 41 bytes.
  EXPECT_EQ(sizeof(leanchan::asio::AsyncReceiver<T24>), 224u);
  EXPECT_EQ(sizeof(ReceiveOp<24>), 224u);
  EXPECT_EQ(held, 465);
  EXPECT_EQ(step, 74);
  const ServiceRow small = service->measure(24, 1);
  EXPECT_EQ(small.idle, 529);
  EXPECT_EQ(small.fill, 643);   // 529 + 40 + 74
  EXPECT_EQ(small.drain, 569);  // 529 + 40
  const ServiceRow burst = service->measure(24, 16);
  EXPECT_EQ(burst.fill, 1003);  // 529 + 400 + 74
  EXPECT_EQ(burst.drain, 929);
  const ServiceRow deep = service->measure(24, 1024);
  EXPECT_EQ(deep.fill, 25691);  // 529 + 25,088 + 74
  EXPECT_EQ(deep.drain, 1313);  // 529 + 784
  const ServiceRow big = service->measure(1024, 1024);
  EXPECT_EQ(big.fill, 1053275);  // 529 + 1,052,672 + 74
  EXPECT_EQ(big.drain, 4641);    // 529 + 4,112
#endif
}
#endif

TEST(MemtableServices, TablesFlagNamesTheServicesTable) {
  leanchan::report::RawOptions raw;
  raw.designs = "leanchan-b8";
  raw.message_sizes = "24";
  raw.capacities = "16";
  raw.format = "markdown";
  raw.tables = "services";
  auto options = leanchan::report::validate_options(raw);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->services_table);
  EXPECT_FALSE(options->memory_table);
  raw.tables = "services,bogus";
  options = leanchan::report::validate_options(raw);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().message(),
            "--tables: unknown table 'bogus' (known: memory, many, services)");
  // The many-channels table with no counts beside the services table: the
  // services table still measures something.
  raw.tables = "many,services";
  raw.many_channels = "none";
  EXPECT_TRUE(leanchan::report::validate_options(raw).ok());
}

}  // namespace
