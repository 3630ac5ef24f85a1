// SPDX-License-Identifier: MIT
#include "options.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "leanchan/channel.h"

namespace leanchan::report {
namespace {

absl::StatusOr<std::vector<std::size_t>> parse_list(absl::string_view flag,
                                                    absl::string_view text) {
  std::vector<std::size_t> values;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::size_t value = 0;
    if (!absl::SimpleAtoi(item, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", item, "' is not a non-negative whole number"));
    }
    values.push_back(value);
  }
  if (values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": the list is empty"));
  }
  return values;
}

absl::Status check_capacity(absl::string_view flag, std::size_t capacity) {
  if (capacity == 0 || capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": capacity must be between 1 and ",
                                                   kMaxCapacity, ", got ", capacity));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReportOptions> validate_options(const RawOptions& raw) {
  ReportOptions options;
  const auto& designs = all_designs();
  if (raw.designs == "all") {
    for (const Design& design : designs) options.designs.push_back(&design);
  } else {
    for (absl::string_view name : absl::StrSplit(raw.designs, ',', absl::SkipWhitespace())) {
      auto found = std::find_if(designs.begin(), designs.end(),
                                [&](const Design& d) { return d.name == name; });
      if (found == designs.end()) {
        std::vector<std::string> known;
        for (const Design& d : designs) known.push_back(d.name);
        return absl::InvalidArgumentError(absl::StrCat("--designs: unknown design '", name,
                                                       "' (known: ", absl::StrJoin(known, ", "),
                                                       ", or all)"));
      }
      options.designs.push_back(&*found);
    }
    if (options.designs.empty()) return absl::InvalidArgumentError("--designs: the list is empty");
  }

  auto sizes = parse_list("message_sizes", raw.message_sizes);
  if (!sizes.ok()) return sizes.status();
  const auto& supported = supported_message_sizes();
  for (std::size_t size : *sizes) {
    if (std::find(supported.begin(), supported.end(), size) == supported.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--message_sizes: message size ", size,
          " is not built into this report (built: ", absl::StrJoin(supported, ", "), ")"));
    }
  }
  options.message_sizes = *sizes;

  auto capacities = parse_list("capacities", raw.capacities);
  if (!capacities.ok()) return capacities.status();
  for (std::size_t capacity : *capacities) {
    if (auto status = check_capacity("capacities", capacity); !status.ok()) return status;
  }
  options.capacities = *capacities;

  auto format = parse_format(raw.format);
  if (!format) {
    return absl::InvalidArgumentError(
        absl::StrCat("--format: unknown format '", raw.format, "' (known: markdown, csv, json)"));
  }
  options.format = *format;

  if (raw.many_channels != "none" && !raw.many_channels.empty()) {
    auto counts = parse_list("many_channels", raw.many_channels);
    if (!counts.ok()) return counts.status();
    for (std::size_t count : *counts) {
      if (count == 0 || count > 10'000'000) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--many_channels: a channel count must be between 1 and 10000000, got ", count));
      }
    }
    options.many_channels = *counts;
  }
  if (auto status = check_capacity("many_capacity", raw.many_capacity); !status.ok()) return status;
  options.many_capacity = raw.many_capacity;
  if (raw.burst > raw.many_capacity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--burst: ", raw.burst, " messages do not fit --many_capacity=", raw.many_capacity));
  }
  options.burst = raw.burst;

  bool memory = false;
  bool many = false;
  for (absl::string_view table : absl::StrSplit(raw.tables, ',', absl::SkipWhitespace())) {
    if (table == "memory") {
      memory = true;
    } else if (table == "many") {
      many = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--tables: unknown table '", table, "' (known: memory, many)"));
    }
  }
  if (!memory && !many) return absl::InvalidArgumentError("--tables: the list is empty");
  options.memory_table = memory;
  if (!many) options.many_channels.clear();

  options.retentions.clear();
  for (absl::string_view policy : absl::StrSplit(raw.retain, ',', absl::SkipWhitespace())) {
    Retention retention;
    if (policy == "none") {
      retention = Retention::kKeepNone;
    } else if (policy == "one") {
      retention = Retention::kKeepOne;
    } else if (unsigned blocks = 0;
               absl::SimpleAtoi(policy, &blocks) && blocks <= Retention::kMaxKeptBlocks) {
      retention = Retention::keep(blocks);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--retain: unknown policy '", policy,
                                                     "' (known: none, one, or 0..",
                                                     Retention::kMaxKeptBlocks, " blocks)"));
    }
    if (std::find(options.retentions.begin(), options.retentions.end(), retention) ==
        options.retentions.end()) {
      options.retentions.push_back(retention);
    }
  }
  if (options.retentions.empty()) return absl::InvalidArgumentError("--retain: the list is empty");
  return options;
}

}  // namespace leanchan::report
