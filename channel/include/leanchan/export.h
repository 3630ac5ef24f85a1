// SPDX-License-Identifier: MIT
/// @file
/// leanchan/export.h: LEANCHAN_API marks what the compiled library exports.
///
/// The library is built with -fvisibility=hidden (static and shared alike),
/// so only what is marked here is visible outside libleanchan.so: the
/// public classes with out-of-line members, and the internal functions the
/// inline templates call, each marked on its own declaration (the control
/// block's entry points, the argument checks, the futex wrapper). The
/// internal classes are not marked: their other members stay private to
/// the library. docs/abi.md lists every exported name, and
/// scripts/check_abi.py checks a shared library against that list.
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
