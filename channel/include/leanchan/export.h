// SPDX-License-Identifier: MIT
/// @file
/// leanchan/export.h: LEANCHAN_API marks what the compiled library exports.
///
/// The library is built with -fvisibility=hidden (static and shared alike),
/// so only what is marked here is visible outside libleanchan.so: the
/// public classes with out-of-line members, and the internal functions and
/// classes the inline templates call (the control block's algorithm, the
/// futex wrapper). Everything else stays private to the library, so the
/// ABI is what these names are (docs/abi.md).
#ifndef LEANCHAN_EXPORT_H_
#define LEANCHAN_EXPORT_H_

// leanchan/channel.h and status.h include this first, so a consumer built
// for an older standard gets this line rather than an error deep inside
// <coroutine>.
#if __cplusplus < 202002L
#error "leanchan needs C++20 or later (-std=c++20 or newer)"
#endif

/// @def LEANCHAN_API
/// Marks a class or function the compiled library exports (default visibility).
#if defined(__GNUC__) || defined(__clang__)
#define LEANCHAN_API __attribute__((visibility("default")))
#else
#define LEANCHAN_API
#endif

#endif  // LEANCHAN_EXPORT_H_
