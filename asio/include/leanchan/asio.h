// SPDX-License-Identifier: MIT
/// @file
/// leanchan/asio.h: leanchan channels as Asio I/O objects (optional,
/// header-only; target leanchan::asio, built when Asio's headers are found).
///
/// @code
///   auto [raw_tx, raw_rx] = leanchan::channel<Event>(16);
///   leanchan::asio::AsyncReceiver<Event> rx(io.get_executor(), std::move(raw_rx));
///   leanchan::asio::AsyncSender<Event> tx(io.get_executor(), raw_tx);
///
///   co_await tx.async_send(event, asio::use_awaitable);          // coroutine
///   rx.async_recv([](asio::error_code ec, std::optional<Event> e) {  // callback
///     if (!ec && e) handle(*e);
///   });
///   auto op = rx.async_recv(asio::experimental::deferred);        // deferred
/// @endcode
///
/// Any completion token works (use_awaitable, callbacks, deferred, futures,
/// bind_cancellation_slot, as_tuple...). Waiting costs no thread: it arms the
/// channel's notifier (receive) or queues one in the channel's FIFO waiter
/// queue (send), and the notifier's callback posts the operation's next step
/// to the object's executor. See docs/asio.md.
///
/// Standalone Asio by default (Debian's libasio-dev); define
/// LEANCHAN_ASIO_USE_BOOST to use Boost.Asio instead.
///
/// @namespace leanchan::asio
/// leanchan channels as Asio I/O objects: AsyncReceiver and AsyncSender
/// (leanchan/asio.h).
#ifndef LEANCHAN_ASIO_H_
#define LEANCHAN_ASIO_H_

#include "leanchan/asio/host.h"
#include "leanchan/asio/receiver.h"
#include "leanchan/asio/registry.h"
#include "leanchan/asio/resumer.h"
#include "leanchan/asio/sender.h"

#endif  // LEANCHAN_ASIO_H_
