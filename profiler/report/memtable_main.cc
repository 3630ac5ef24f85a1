// leanchan-memtable: prints what channels cost in heap bytes at create, after
// a fill and after a drain, for each design x message size x capacity, and
// what many channels cost idle, after a burst and after draining.
//
// Exit codes: 0 success, 1 a flag Abseil itself rejects (unknown flag), 2 a
// bad value, an unwritable output file, or a hook that is not active.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "designs.h"
#include "leanchan/profiler/heap_counters.h"
#include "options.h"
#include "output.h"

ABSL_FLAG(std::string, designs, "all",
          "Comma-separated designs: leanchan-b1, leanchan-b2, leanchan-b4, leanchan-b8, "
          "leanchan-b16, leanchan-b32, tokio-style; or all");
ABSL_FLAG(std::string, message_sizes, "8,24,128,250,1024",
          "Comma-separated message sizes in bytes (those built in: 8, 24, 128, 250, 1024)");
ABSL_FLAG(std::string, capacities, "1,16,32,100,1024", "Comma-separated channel capacities");
ABSL_FLAG(std::string, format, "markdown", "Output format: markdown, csv or json");
ABSL_FLAG(std::string, output, "", "Write the report to this file instead of standard output");
ABSL_FLAG(std::string, many_channels, "1000,100000",
          "Comma-separated channel counts for the many-channels table, or none");
ABSL_FLAG(std::size_t, many_capacity, 16, "Capacity of each channel in the many-channels table");
ABSL_FLAG(std::size_t, burst, 16, "Messages sent into every channel in the many-channels table");

namespace {

int fail(const std::string& message) {
  std::cerr << "leanchan-memtable: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints the heap cost of channels (create / fill / drain) per design, message size and "
      "capacity, and of many channels before and after a burst.\n"
      "Example: leanchan-memtable --designs=leanchan-b8,tokio-style --capacities=1,1024");
  absl::ParseCommandLine(argc, argv);

  leanchan::report::RawOptions raw;
  raw.designs = absl::GetFlag(FLAGS_designs);
  raw.message_sizes = absl::GetFlag(FLAGS_message_sizes);
  raw.capacities = absl::GetFlag(FLAGS_capacities);
  raw.format = absl::GetFlag(FLAGS_format);
  raw.many_channels = absl::GetFlag(FLAGS_many_channels);
  raw.many_capacity = absl::GetFlag(FLAGS_many_capacity);
  raw.burst = absl::GetFlag(FLAGS_burst);
  auto options = leanchan::report::validate_options(raw);
  if (!options.ok()) return fail(std::string(options.status().message()));
  if (!leanchan::profiler::heap_hook_active()) {
    return fail("the counting heap hook is not linked in; every figure would read 0");
  }

  // Open the output first, so a bad path fails before any measuring.
  const std::string output_path = absl::GetFlag(FLAGS_output);
  std::ofstream file;
  if (!output_path.empty()) {
    file.open(output_path, std::ios::out | std::ios::trunc);
    if (!file) {
      return fail("cannot write --output=" + output_path + ": " + std::strerror(errno));
    }
  }

  std::vector<leanchan::report::MemoryRow> rows;
  for (const auto* design : options->designs) {
    for (std::size_t size : options->message_sizes) {
      for (std::size_t capacity : options->capacities) {
        rows.push_back(design->measure(size, capacity));
      }
    }
  }
  std::vector<leanchan::report::ManyChannelsRow> many;
  for (std::size_t count : options->many_channels) {
    for (const auto* design : options->designs) {
      many.push_back(design->many_channels(count, options->many_capacity, options->burst));
    }
  }

  const std::string text =
      leanchan::report::format_report(options->format, options->designs, rows, many);
  if (output_path.empty()) {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) return fail("cannot write to standard output");
  } else {
    file << text;
    file.close();
    if (!file) return fail("cannot write --output=" + output_path);
  }
  return 0;
}
