// SPDX-License-Identifier: MIT
// The Asio the asio tests run on: the one leanchan::asio was built on,
// standalone Asio (namespace ::asio) or, with LEANCHAN_ASIO_USE_BOOST,
// Boost.Asio, which this header names ::asio too, so one test source
// covers both. Error codes: leanchan::asio::error_code (Boost.Asio has
// no boost::asio::error_code).
#ifndef LEANCHAN_TESTS_ASIO_ASIO_FLAVOUR_H_
#define LEANCHAN_TESTS_ASIO_ASIO_FLAVOUR_H_

#if defined(LEANCHAN_ASIO_USE_BOOST)
#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/asio/experimental/deferred.hpp>
namespace asio = ::boost::asio;
#else
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/deferred.hpp>
#endif

#endif  // LEANCHAN_TESTS_ASIO_ASIO_FLAVOUR_H_
