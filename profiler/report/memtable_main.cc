// SPDX-License-Identifier: MIT
// leanchan-memtable: prints what channels cost in heap bytes at create, after
// a fill and after a drain, for each design x message size x capacity; what
// many channels cost idle, after a burst and after draining; and what one
// service costs (the channel with what serves it) idle, after a fill and
// served, for each message size x capacity.
//
// Exit codes: 0 success (and --help / -h), 1 a flag Abseil itself rejects
// (unknown flag, a value of the wrong type), 2 a bad value, a stray
// argument, a selection that selects nothing, an unwritable output file, a
// hook that is not active, or a ReadySet (its eventfd) that the services
// table cannot make.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>

#include "absl/flags/flag.h"
#include "cli.h"
#include "designs.h"
#include "leanchan/block_pool.h"
#include "leanchan/profiler/heap_counters.h"
#include "options.h"
#include "output.h"
#include "services.h"

ABSL_FLAG(std::string, designs, "all",
          "Comma-separated designs: leanchan-default (what channel<T>(capacity) makes), "
          "leanchan-b1, leanchan-b2, leanchan-b4, leanchan-b8, "
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
ABSL_FLAG(std::string, retain, "none,one",
          "Retention policies measured in the many-channels table (leanchan designs): none, one, "
          "or a number of blocks kept (0..64; 0 and 1 are none and one)");
ABSL_FLAG(std::string, memory, "default",
          "Where the many channels' memory comes from (leanchan designs): default (the global "
          "operator new), pool (a leanchan::BlockPool, which gives emptied pages back), or both "
          "(default,pool)");
ABSL_FLAG(std::string, tables, "memory,many,services",
          "Tables to print, comma-separated: memory (create/fill/drain), many (many channels), "
          "services (per service, the channel and what serves it: a ReadySet, leanchan::asio; "
          "per message size and capacity)");

namespace {

// leanchan-memtable or leanchan-memtable-mimalloc (one main, two programs):
// the name it was started by, which starts every message.
std::string g_program = "leanchan-memtable";

int fail(const std::string& message) {
  std::cerr << g_program << ": " << message << "\n";
  return 2;
}

// Runs one many-channels measurement in a forked child, so every row starts
// from the same heap and its resident-memory figures are not blurred by
// memory an earlier row freed (or kept). The child sends the numbers back
// through a pipe. Returns false if the child could not run or report.
bool measure_in_child(const leanchan::report::Design& design, std::size_t channels,
                      std::size_t capacity, std::size_t burst, leanchan::Retention retention,
                      const std::string& memory, leanchan::report::ManyChannelsRow* row) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    ::close(fds[0]);
    // The pool lives in the child only: its pages are the row's own.
    std::optional<leanchan::BlockPool> pool;
    if (memory == "pool") pool.emplace();
    const auto measured =
        design.many_channels(channels, capacity, burst, retention, pool ? &*pool : nullptr);
    const double numbers[9] = {
        measured.heap_idle,   measured.heap_burst,    measured.heap_drained,
        measured.rss_idle,    measured.rss_burst,     measured.rss_drained,
        measured.rss_trimmed, measured.burst2_allocs, measured.burst2_ns_per_msg};
    const bool sent = ::write(fds[1], numbers, sizeof(numbers)) == sizeof(numbers);
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  double numbers[9];
  const ssize_t got = ::read(fds[0], numbers, sizeof(numbers));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (got != sizeof(numbers) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  row->design = design.name;
  row->allocator = leanchan::profiler::heap_backend_name();
  row->channels = channels;
  row->burst = burst;
  row->heap_idle = numbers[0];
  row->heap_burst = numbers[1];
  row->heap_drained = numbers[2];
  row->rss_idle = numbers[3];
  row->rss_burst = numbers[4];
  row->rss_drained = numbers[5];
  row->rss_trimmed = numbers[6];
  row->burst2_allocs = numbers[7];
  row->burst2_ns_per_msg = numbers[8];
  if (design.has_retention) row->retain = leanchan::report::retain_name(retention);
  row->memory = memory;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 0 && argv[0] != nullptr && argv[0][0] != '\0') {
    const std::string invoked = argv[0];
    g_program = invoked.substr(invoked.find_last_of('/') + 1);
  }
  if (auto exit_code = leanchan::cli::parse_command_line(
          g_program,
          "Prints the heap cost of channels (create / fill / drain) per design, message size and "
          "capacity, of many channels before and after a burst, and of one service (a channel "
          "and what serves it) idle, filled and served.\n"
          "Example: leanchan-memtable --designs=leanchan-b8,tokio-style --capacities=1,1024",
          absl::GetFlagReflectionHandle(FLAGS_designs), argc, argv)) {
    return *exit_code;
  }

  leanchan::report::RawOptions raw;
  raw.designs = absl::GetFlag(FLAGS_designs);
  raw.message_sizes = absl::GetFlag(FLAGS_message_sizes);
  raw.capacities = absl::GetFlag(FLAGS_capacities);
  raw.format = absl::GetFlag(FLAGS_format);
  raw.many_channels = absl::GetFlag(FLAGS_many_channels);
  raw.many_capacity = absl::GetFlag(FLAGS_many_capacity);
  raw.burst = absl::GetFlag(FLAGS_burst);
  raw.tables = absl::GetFlag(FLAGS_tables);
  raw.retain = absl::GetFlag(FLAGS_retain);
  raw.memory = absl::GetFlag(FLAGS_memory);
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

  // Many channels first, each in its own child, before this process's heap
  // has seen anything else.
  std::vector<leanchan::report::ManyChannelsRow> many;
  for (std::size_t count : options->many_channels) {
    for (const std::string& memory : options->memories) {
      for (const auto* design : options->designs) {
        // A design whose channels take no memory resource has default rows only.
        if (memory != "default" && !design->has_memory_resource) continue;
        for (leanchan::Retention retention : options->retentions) {
          leanchan::report::ManyChannelsRow row;
          if (!measure_in_child(*design, count, options->many_capacity, options->burst, retention,
                                memory, &row)) {
            return fail("the many-channels measurement for " + design->name + " failed");
          }
          many.push_back(row);
          if (!design->has_retention) break;  // one row: the policy does not apply
        }
      }
    }
  }

  std::vector<leanchan::report::MemoryRow> rows;
  for (const auto* design : options->designs) {
    if (!options->memory_table) break;
    for (std::size_t size : options->message_sizes) {
      for (std::size_t capacity : options->capacities) {
        rows.push_back(design->measure(size, capacity));
      }
    }
  }
  std::vector<leanchan::report::ServiceRow> services;
  if (options->services_table) {
    try {
      for (const auto& service : leanchan::report::all_services()) {
        for (std::size_t size : options->message_sizes) {
          for (std::size_t capacity : options->capacities) {
            services.push_back(service.measure(size, capacity));
          }
        }
      }
    } catch (const std::system_error& e) {
      return fail(std::string("cannot create the ReadySet for the services table: ") + e.what());
    }
  }
  const std::string text =
      leanchan::report::format_report(options->format, options->designs, rows, many, services);
  if (output_path.empty()) {
    std::cout << text;
    if (const int code = leanchan::cli::finish_output(g_program, 0); code != 0) return code;
  } else {
    file << text;
    file.close();
    if (!file) return fail("cannot write --output=" + output_path);
  }
  return 0;
}
