// SPDX-License-Identifier: MIT
// The Asio flavour the proxy is built on: Boost.Asio, always (the build
// defines LEANCHAN_ASIO_USE_BOOST for the proxy's targets), so that
// leanchan::asio's objects and Beast share one io_context type.
#ifndef LEANCHAN_PROXY_NET_H_
#define LEANCHAN_PROXY_NET_H_

#ifndef LEANCHAN_ASIO_USE_BOOST
#error "leanchan-proxy is built on Boost.Asio: define LEANCHAN_ASIO_USE_BOOST"
#endif

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace proxy {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
// co_await op(..., kTuple): errors come back as values, never thrown.
inline constexpr auto kTuple = net::as_tuple(net::use_awaitable);

}  // namespace proxy

#endif  // LEANCHAN_PROXY_NET_H_
