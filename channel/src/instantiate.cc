// SPDX-License-Identifier: MIT
// Instantiates the channel's class templates once inside the library, so
// that the headers' code is compiled with the library's own warnings
// (-Wconversion included) and any warning there fails the build, whatever
// the user's flags.
#include <cstdint>
#include <string>

#include "leanchan/channel.h"

namespace leanchan {

template class Sender<std::uint64_t, 1>;
template class Sender<std::string, 8>;
template class Receiver<std::uint64_t, 1>;
template class Receiver<std::string, 8>;
template class Permit<std::uint64_t, 32>;
template class PermitBatch<std::string, 8>;
template class WeakSender<std::uint64_t, 1>;
template class RecvAwaitable<std::uint64_t, 4>;
template class RecvManyAwaitable<std::string, 8>;
template class SendAwaitable<std::string, 8>;
template class ReserveAwaitable<std::uint64_t, 4>;
template class ClosedAwaitable<std::uint64_t, 4>;

namespace internal {
template struct ChannelOps<std::uint64_t, 1>;
template struct ChannelOps<std::string, 8>;
template struct ChannelOps<std::uint32_t, 32>;
}  // namespace internal

}  // namespace leanchan
