// SPDX-License-Identifier: MIT
#include "options.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cli.h"
#include "leanchan/channel.h"

namespace leanchan::report {
namespace {

// The elements of a comma-separated list flag; an empty list or an empty
// element ("1,,2") is an error.
absl::StatusOr<std::vector<std::string>> split(absl::string_view flag, absl::string_view text) {
  std::vector<std::string> items;
  std::string error;
  if (!cli::split_list(std::string_view(flag.data(), flag.size()),
                       std::string_view(text.data(), text.size()), &items, &error)) {
    return absl::InvalidArgumentError(error);
  }
  return items;
}

absl::StatusOr<std::vector<std::size_t>> parse_list(absl::string_view flag,
                                                    absl::string_view text) {
  auto items = split(flag, text);
  if (!items.ok()) return items.status();
  std::vector<std::size_t> values;
  for (const std::string& item : *items) {
    std::size_t value = 0;
    if (!absl::SimpleAtoi(item, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", item, "' is not a non-negative whole number"));
    }
    values.push_back(value);
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
    auto names = split("designs", raw.designs);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      if (name == "all") {
        return absl::InvalidArgumentError(
            "--designs: 'all' stands alone (it already names every design)");
      }
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

  if (raw.many_channels != "none") {
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
  bool services = false;
  auto tables = split("tables", raw.tables);
  if (!tables.ok()) return tables.status();
  for (const std::string& table : *tables) {
    if (table == "memory") {
      memory = true;
    } else if (table == "many") {
      many = true;
    } else if (table == "services") {
      services = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--tables: unknown table '", table, "' (known: memory, many, services)"));
    }
  }
  if (many && !memory && !services && options.many_channels.empty()) {
    return absl::InvalidArgumentError(
        "--tables=many with --many_channels=none selects nothing to measure (give channel counts, "
        "or add memory or services to --tables)");
  }
  options.memory_table = memory;
  options.services_table = services;
  if (!many) options.many_channels.clear();

  options.retentions.clear();
  auto policies = split("retain", raw.retain);
  if (!policies.ok()) return policies.status();
  for (const std::string& policy : *policies) {
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

  options.memories.clear();
  auto memories = split("memory", raw.memory);
  if (!memories.ok()) return memories.status();
  for (const std::string& source : *memories) {
    if (source != "default" && source != "pool") {
      return absl::InvalidArgumentError(
          absl::StrCat("--memory: unknown memory '", source, "' (known: default, pool)"));
    }
    if (std::find(options.memories.begin(), options.memories.end(), source) ==
        options.memories.end()) {
      options.memories.push_back(source);
    }
  }
  // A many-channels table alone, from pool memory only, of designs whose
  // channels take no memory resource: no row would be measured.
  if (!options.memory_table && !options.services_table && !options.many_channels.empty()) {
    const bool some_row = std::any_of(
        options.memories.begin(), options.memories.end(), [&](const std::string& source) {
          return source == "default" ||
                 std::any_of(options.designs.begin(), options.designs.end(),
                             [](const Design* d) { return d->has_memory_resource; });
        });
    if (!some_row) {
      return absl::InvalidArgumentError(
          "--tables=many with --memory=pool selects nothing to measure: none of --designs "
          "takes a memory resource (the leanchan designs do; or add default to --memory)");
    }
  }
  return options;
}

}  // namespace leanchan::report
