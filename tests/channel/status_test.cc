// SPDX-License-Identifier: MIT
// SendResult and RecvResult hold a status and, only when the status says so,
// a value (leanchan/status.h). Their special members are written by hand (a
// union, not std::optional), so these tests pin what they must do: the value
// is moved, copied, handed back and destroyed exactly once, and a result
// without a value never constructs or destroys one.
#include "leanchan/status.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "leanchan/channel.h"
#include "test_support.h"

namespace {

using leanchan::RecvResult;
using leanchan::RecvStatus;
using leanchan::SendResult;
using leanchan::SendStatus;
using leanchan::testing::Tracked;

// Copyable exactly when T is; moves never throw; a copy may throw (and is
// then not noexcept), as with the std::optional these classes replaced.
template <template <class> class Result>
constexpr bool kTraitsHold =
    std::is_nothrow_move_constructible_v<Result<std::string>>&& std::is_nothrow_move_assignable_v<
        Result<std::string>>&& std::is_copy_constructible_v<Result<std::string>>&&
        std::is_copy_assignable_v<Result<std::string>> &&
    !std::is_nothrow_copy_constructible_v<Result<std::string>> &&
    !std::is_nothrow_copy_assignable_v<Result<std::string>> &&
    std::is_nothrow_copy_constructible_v<Result<int>> &&
    std::is_nothrow_copy_assignable_v<Result<int>> &&
    std::is_nothrow_move_constructible_v<Result<std::unique_ptr<int>>> &&
    std::is_nothrow_move_assignable_v<Result<std::unique_ptr<int>>> &&
    !std::is_copy_constructible_v<Result<std::unique_ptr<int>>> &&
    !std::is_copy_assignable_v<Result<std::unique_ptr<int>>> &&
    !std::is_default_constructible_v<Result<int>>;
static_assert(kTraitsHold<SendResult>);
static_assert(kTraitsHold<RecvResult>);

// A message whose copy throws on request (its move never does).
struct ThrowingCopy {
  static inline bool armed = false;
  explicit ThrowingCopy(int v) : value(v) {}
  ThrowingCopy(const ThrowingCopy& other) : value(other.value) {
    if (armed) throw std::runtime_error("copy");
  }
  ThrowingCopy(ThrowingCopy&&) noexcept = default;
  ThrowingCopy& operator=(const ThrowingCopy&) = default;
  int value;
};

// Results are built by the channel; these helpers reach the same factories
// through the public API.
SendResult<Tracked> failed_send(std::uint64_t v) {
  auto [tx, rx] = leanchan::channel<Tracked, 8>(1);
  EXPECT_TRUE(tx.try_send(Tracked(100)).ok());
  return tx.try_send(Tracked(v));  // full: kFull, the value handed back
}

TEST(SendResult, SuccessHoldsNoValue) {
  Tracked::reset();
  {
    auto [tx, rx] = leanchan::channel<Tracked, 8>(4);
    SendResult<Tracked> sent = tx.try_send(Tracked(1));
    ASSERT_TRUE(sent.ok());
    EXPECT_EQ(sent.status(), SendStatus::kOk);
    // The message and its moves: the argument, the slot. A result holding a
    // copy would show a third live instance here.
    EXPECT_EQ(Tracked::live(), 1);  // only the queued message
    SendResult<Tracked> moved = std::move(sent);
    EXPECT_TRUE(moved.ok());
    EXPECT_EQ(Tracked::live(), 1);
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(SendResult, FailureHandsTheValueBackAndDestroysItOnce) {
  Tracked::reset();
  {
    SendResult<Tracked> full = failed_send(7);
    ASSERT_FALSE(full.ok());
    EXPECT_EQ(full.status(), SendStatus::kFull);
    EXPECT_EQ(full.value().value, 7u);
    EXPECT_FALSE(full.value().moved_from);
    EXPECT_EQ(Tracked::live(), 1);  // the channel (and its message) is gone

    SendResult<Tracked> moved = std::move(full);  // moves the value once more
    ASSERT_FALSE(moved.ok());
    EXPECT_EQ(moved.value().value, 7u);
    EXPECT_EQ(Tracked::live(), 2);  // the moved-from instance lives until its result goes

    Tracked back = std::move(moved).value();
    EXPECT_EQ(back.value, 7u);
  }
  EXPECT_EQ(Tracked::live(), 0);
  EXPECT_EQ(Tracked::constructed.load(), Tracked::destroyed.load());
}

TEST(SendResult, AssignmentReplacesOrDropsTheHeldValue) {
  Tracked::reset();
  {
    SendResult<Tracked> result = failed_send(1);
    result = failed_send(2);  // a value replaces a value: the old one is destroyed
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.value().value, 2u);

    auto [tx, rx] = leanchan::channel<Tracked, 8>(4);
    result = tx.try_send(Tracked(3));  // success replaces a value: it is destroyed
    EXPECT_TRUE(result.ok());
    EXPECT_EQ(Tracked::live(), 1);  // only the message queued in this channel
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(SendResult, CopiesACopyableValue) {
  auto [tx, rx] = leanchan::channel<std::string, 8>(1);
  ASSERT_TRUE(tx.try_send(std::string("queued")).ok());
  const SendResult<std::string> full = tx.try_send(std::string(100, 'x'));
  ASSERT_FALSE(full.ok());
  SendResult<std::string> copy = full;
  EXPECT_EQ(copy.status(), SendStatus::kFull);
  EXPECT_EQ(copy.value(), std::string(100, 'x'));
  copy = full;  // copy-assignment over a held value
  EXPECT_EQ(copy.value(), full.value());
  SendResult<std::string> ok = tx.try_send(std::string("no room"));
  ASSERT_FALSE(ok.ok());
  ASSERT_TRUE(rx.recv().has_value());
  ok = tx.try_send(std::string("room now"));
  EXPECT_TRUE(ok.ok());
  copy = ok;  // copying a result without a value drops the held one
  EXPECT_TRUE(copy.ok());
}

TEST(SendResult, ACopyThatThrowsLeavesTheTargetUnchanged) {
  auto [tx, rx] = leanchan::channel<ThrowingCopy, 8>(1);
  ASSERT_TRUE(tx.try_send(ThrowingCopy(0)).ok());
  SendResult<ThrowingCopy> target = tx.try_send(ThrowingCopy(1));
  const SendResult<ThrowingCopy> source = tx.try_send(ThrowingCopy(2));
  ASSERT_FALSE(target.ok());
  ASSERT_FALSE(source.ok());
  ThrowingCopy::armed = true;
  EXPECT_THROW(target = source, std::runtime_error);  // reaches the caller, no terminate
  EXPECT_THROW((void)SendResult<ThrowingCopy>{source}, std::runtime_error);
  ThrowingCopy::armed = false;
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.value().value, 1);
  target = source;
  EXPECT_EQ(target.value().value, 2);
}

TEST(SendResult, SelfAssignmentKeepsTheValue) {
  Tracked::reset();
  {
    SendResult<Tracked> result = failed_send(9);
    SendResult<Tracked>& alias = result;
    result = std::move(alias);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.value().value, 9u);
    EXPECT_FALSE(result.value().moved_from);

    auto [tx, rx] = leanchan::channel<std::string, 8>(1);
    ASSERT_TRUE(tx.try_send(std::string("queued")).ok());
    SendResult<std::string> text = tx.try_send(std::string(40, 't'));
    SendResult<std::string>& text_alias = text;
    text = text_alias;
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.value(), std::string(40, 't'));
  }
  EXPECT_EQ(Tracked::live(), 0);
}

TEST(SendResult, MoveOnlyValue) {
  auto [tx, rx] = leanchan::channel<std::unique_ptr<int>, 8>(1);
  ASSERT_TRUE(tx.try_send(std::make_unique<int>(1)).ok());
  SendResult<std::unique_ptr<int>> full = tx.try_send(std::make_unique<int>(2));
  ASSERT_FALSE(full.ok());
  std::unique_ptr<int> back = std::move(full).value();
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(*back, 2);
}

TEST(SendResult, SmallByteAlignedValueRoundTrips) {
  // The case the hand-written storage is for (an 8-byte, byte-aligned T).
  using Small = std::array<unsigned char, 8>;
  auto [tx, rx] = leanchan::channel<Small, 8>(1);
  ASSERT_TRUE(tx.try_send(Small{1, 2, 3, 4, 5, 6, 7, 8}).ok());
  SendResult<Small> full = tx.try_send(Small{8, 7, 6, 5, 4, 3, 2, 1});
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.value(), (Small{8, 7, 6, 5, 4, 3, 2, 1}));
  RecvResult<Small> got = rx.try_recv();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value(), (Small{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(RecvResult, HoldsTheMessageOnlyWhenOk) {
  Tracked::reset();
  {
    auto [tx, rx] = leanchan::channel<Tracked, 8>(4);
    RecvResult<Tracked> empty = rx.try_recv();
    EXPECT_FALSE(empty.ok());
    EXPECT_EQ(empty.status(), RecvStatus::kEmpty);
    EXPECT_EQ(Tracked::live(), 0);

    ASSERT_TRUE(tx.try_send(Tracked(5)).ok());
    RecvResult<Tracked> got = rx.try_recv();
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got.value().value, 5u);
    EXPECT_EQ(Tracked::live(), 1);

    RecvResult<Tracked> moved = std::move(got);
    EXPECT_EQ(moved.value().value, 5u);
    moved = rx.try_recv();  // empty replaces a message: it is destroyed
    EXPECT_FALSE(moved.ok());
    EXPECT_EQ(Tracked::live(), 1);  // the moved-from instance inside `got`
  }
  EXPECT_EQ(Tracked::live(), 0);
  EXPECT_EQ(Tracked::constructed.load(), Tracked::destroyed.load());
}

TEST(RecvResult, CopiesACopyableMessage) {
  auto [tx, rx] = leanchan::channel<std::string, 8>(2);
  ASSERT_TRUE(tx.try_send(std::string(64, 'm')).ok());
  const RecvResult<std::string> got = rx.try_recv();
  ASSERT_TRUE(got.ok());
  RecvResult<std::string> copy = got;
  EXPECT_EQ(copy.value(), std::string(64, 'm'));
  copy = rx.try_recv();  // empty now
  EXPECT_EQ(copy.status(), RecvStatus::kEmpty);
  EXPECT_EQ(got.value(), std::string(64, 'm'));
}

}  // namespace
