// SPDX-License-Identifier: MIT
// The command-line conventions leanchan-proxy and leanchan-proxy-backend
// share: a bad flag or value is one line on stderr, "PROGRAM: FLAG: WHY",
// and exit status 2.
#ifndef LEANCHAN_PROXY_COMMAND_LINE_H_
#define LEANCHAN_PROXY_COMMAND_LINE_H_

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace proxy {

[[noreturn]] inline void flag_error(std::string_view program, std::string_view flag,
                                    std::string_view why) {
  std::fprintf(stderr, "%.*s: %.*s: %.*s\n", static_cast<int>(program.size()), program.data(),
               static_cast<int>(flag.size()), flag.data(), static_cast<int>(why.size()),
               why.data());
  std::exit(2);
}

// `value` as a whole number in [min, max], or flag_error.
inline std::uint64_t parse_flag_number(std::string_view program, std::string_view flag,
                                       std::string_view value, std::uint64_t min,
                                       std::uint64_t max) {
  std::uint64_t result = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || result < min ||
      result > max) {
    flag_error(program, flag,
               "bad value '" + std::string(value) + "' (a whole number from " +
                   std::to_string(min) + " to " + std::to_string(max) + ")");
  }
  return result;
}

}  // namespace proxy

#endif  // LEANCHAN_PROXY_COMMAND_LINE_H_
