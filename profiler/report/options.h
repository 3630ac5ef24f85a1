// SPDX-License-Identifier: MIT
// The report's command line, validated: every problem becomes one message.
#ifndef LEANCHAN_PROFILER_REPORT_OPTIONS_H_
#define LEANCHAN_PROFILER_REPORT_OPTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "designs.h"
#include "output.h"

namespace leanchan::report {

struct RawOptions {
  std::string designs;                 // comma list of design names, or "all"
  std::string message_sizes;           // comma list of byte counts
  std::string capacities;              // comma list
  std::string format;                  // markdown | csv | json
  std::string many_channels = "none";  // comma list of channel counts, or "none"
  std::size_t many_capacity = 16;
  std::size_t burst = 16;
  std::string tables = "memory,many,services";  // which tables to print
  std::string retain = "none,one";              // retention policies for the many-channels table
  std::string memory = "default";               // where the many channels' memory comes from
};

struct ReportOptions {
  std::vector<const Design*> designs;
  std::vector<std::size_t> message_sizes;
  std::vector<std::size_t> capacities;
  Format format = Format::kMarkdown;
  std::vector<std::size_t> many_channels;
  std::size_t many_capacity = 16;
  std::size_t burst = 16;
  bool memory_table = true;
  // The services table: each service (services.h) per message size and
  // capacity.
  bool services_table = true;
  std::vector<Retention> retentions = {Retention::kKeepNone, Retention::kKeepOne};
  // "default" (the global operator new) and/or "pool" (a leanchan::BlockPool).
  std::vector<std::string> memories = {"default"};
};

// InvalidArgument with a one-line message naming the flag and the value. A
// list flag may not be empty or hold an empty element ("1,,2"), and a
// selection that measures nothing (--tables=many --many_channels=none) is an
// error too.
absl::StatusOr<ReportOptions> validate_options(const RawOptions& raw);

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_OPTIONS_H_
