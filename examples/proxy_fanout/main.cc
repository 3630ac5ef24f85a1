// SPDX-License-Identifier: MIT
// leanchan-proxy-fanout: the proxy's per-service event fan-out (docs/problem.md)
// on leanchan and on the Tokio-style baseline, for several service counts.
// Prints one Markdown row per (design, services). A run is bounded: it sends
// for --seconds, drains, and stops.
//
// Exit codes: 0 when no event was lost or duplicated (and for --help / -h),
// 1 otherwise, 2 for a bad flag value or a stray argument (1 for a flag
// Abseil itself rejects).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "cli.h"  // profiler/report/cli.h: --help, -h, stray arguments, list flags
#include "proxy.h"

ABSL_FLAG(std::string, design, "both", "leanchan, tokio-style, or both");
ABSL_FLAG(std::string, services, "1000,10000,100000",
          "Comma-separated service counts (each 10..1000000)");
ABSL_FLAG(double, seconds, 2.0, "How long the health checker runs per row (0.1..600)");
ABSL_FLAG(int, rate, 20000, "Steady events per second across all services (1..10000000)");
ABSL_FLAG(int, capacity, 16, "Channel capacity per service, also the burst size (1..1024)");
ABSL_FLAG(int, workers, 0,
          "Worker threads serving the channels, 0..64 (0: one fewer than the CPUs, at least 1, so "
          "the checker and the workers are no more busy threads than cores)");
ABSL_FLAG(
    int, runs, 1,
    "Runs of each row (1..100); above 1, every run's row is printed and then each row's spread "
    "(median, min, max) of events/s, p50, p99 and CPU per event");
ABSL_FLAG(std::size_t, top_services, 0,
          "leanchan only: list the service channels in a leanchan::ChannelRegistry, walk it after "
          "each burst and print the this many holding the most memory after the last one (0: "
          "none; at most 1000)");
ABSL_FLAG(std::size_t, budget_bytes, 0,
          "leanchan only: every service channel's memory comes from one shared "
          "leanchan::MemoryBudget of this many bytes (0: none); events it refuses are counted");
ABSL_FLAG(int, zones, 10, "Zones (1..1000); a burst hits every service of one zone");
ABSL_FLAG(int, burst_interval_ms, 500, "A zone flaps this often (at least 1)");
ABSL_FLAG(int, churn_per_second, 100, "Services removed and added per second (0..100000)");
ABSL_FLAG(double, rss_every_seconds, 0,
          "Soak mode: sample RSS this often during the run and print the series after the "
          "table (0: off; else 0.1..--seconds). E.g. --seconds=300 --rss_every_seconds=5");

namespace {

int fail(const std::string& message) {
  std::cerr << "leanchan-proxy-fanout: " << message << "\n";
  return 2;
}

std::string each_worker(const proxy::Report& r) {
  std::string out;
  for (double ns : r.worker_cpu_ns_per_event) {
    if (!out.empty()) out += "/";
    out += std::to_string(static_cast<long long>(ns));
  }
  return out;
}

// median, min, max of `values` (not empty).
std::string spread(std::vector<double> values, const char* format) {
  std::sort(values.begin(), values.end());
  const double median = values.size() % 2 == 1
                            ? values[values.size() / 2]
                            : (values[values.size() / 2 - 1] + values[values.size() / 2]) / 2;
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, format, median, values.front(), values.back());
  return buffer;
}

void print_spread(
    const std::map<std::pair<std::size_t, std::string>, std::vector<proxy::Report>>& by_row,
    int runs) {
  std::printf(
      "\nSpread over %d runs (median [min, max]):\n\n"
      "| design | services | events/s | p50 us | p99 us | checker CPU ns/event | workers CPU "
      "ns/event |\n|---|---:|---:|---:|---:|---:|---:|\n",
      runs);
  for (const auto& [key, reports] : by_row) {
    std::vector<double> rate, p50, p99, checker, workers;
    for (const proxy::Report& r : reports) {
      rate.push_back(r.events_per_second);
      p50.push_back(r.p50_us);
      p99.push_back(r.p99_us);
      checker.push_back(r.checker_cpu_ns_per_event);
      workers.push_back(r.workers_cpu_ns_per_event);
    }
    std::printf("| %s | %zu | %s | %s | %s | %s | %s |\n", key.second.c_str(), key.first,
                spread(rate, "%.0f [%.0f, %.0f]").c_str(), spread(p50, "%.1f [%.1f, %.1f]").c_str(),
                spread(p99, "%.1f [%.1f, %.1f]").c_str(),
                spread(checker, "%.0f [%.0f, %.0f]").c_str(),
                spread(workers, "%.0f [%.0f, %.0f]").c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (auto exit_code = leanchan::cli::parse_command_line(
          "leanchan-proxy-fanout",
          "Runs a proxy's per-service event fan-out on leanchan and on the Tokio-style baseline "
          "and prints memory per service, throughput, latency and lost events.\n"
          "Example: leanchan-proxy-fanout --services=1000,10000 --seconds=2",
          absl::GetFlagReflectionHandle(FLAGS_services), argc, argv)) {
    return *exit_code;
  }

  const std::string design = absl::GetFlag(FLAGS_design);
  if (design != "both" && design != "leanchan" && design != "tokio-style") {
    return fail("--design must be leanchan, tokio-style or both, got '" + design + "'");
  }
  std::vector<std::string> items;
  if (std::string error;
      !leanchan::cli::split_list("services", absl::GetFlag(FLAGS_services), &items, &error)) {
    return fail(error);
  }
  std::vector<std::size_t> counts;
  for (const std::string& item : items) {
    std::size_t count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < 10 || count > 1'000'000) {
      return fail("--services: '" + item + "' is not a count in 10..1000000");
    }
    counts.push_back(count);
  }
  proxy::Options options;
  options.seconds = absl::GetFlag(FLAGS_seconds);
  options.rate = absl::GetFlag(FLAGS_rate);
  options.workers = absl::GetFlag(FLAGS_workers);
  if (options.workers == 0) {
    const int cpus = static_cast<int>(std::thread::hardware_concurrency());
    options.workers = std::max(1, cpus - 1);
  }
  const int runs = absl::GetFlag(FLAGS_runs);
  if (runs < 1 || runs > 100) return fail("--runs must be in 1..100");
  options.zones = absl::GetFlag(FLAGS_zones);
  options.burst_interval_ms = absl::GetFlag(FLAGS_burst_interval_ms);
  options.churn_per_second = absl::GetFlag(FLAGS_churn_per_second);
  options.rss_every_seconds = absl::GetFlag(FLAGS_rss_every_seconds);
  const int capacity = absl::GetFlag(FLAGS_capacity);
  if (!(options.seconds >= 0.1 && options.seconds <= 600))
    return fail("--seconds must be in 0.1..600");
  if (options.rate < 1 || options.rate > 10'000'000) return fail("--rate must be in 1..10000000");
  if (capacity < 1 || capacity > 1024) return fail("--capacity must be in 1..1024");
  if (options.workers < 1 || options.workers > 64) return fail("--workers must be in 0..64");
  if (options.zones < 1 || options.zones > 1000) return fail("--zones must be in 1..1000");
  if (options.burst_interval_ms < 1) return fail("--burst_interval_ms must be at least 1");
  if (options.churn_per_second < 0 || options.churn_per_second > 100'000) {
    return fail("--churn_per_second must be in 0..100000");
  }
  if (!(options.rss_every_seconds == 0 ||
        (options.rss_every_seconds >= 0.1 && options.rss_every_seconds <= options.seconds))) {
    return fail("--rss_every_seconds must be 0 (off) or in 0.1..--seconds");
  }
  options.capacity = static_cast<std::size_t>(capacity);
  options.budget_bytes = absl::GetFlag(FLAGS_budget_bytes);
  if (options.budget_bytes > 0 && design == "tokio-style") {
    return fail(
        "--budget_bytes applies to the leanchan design (the baseline takes no memory "
        "resource); use --design=leanchan or both");
  }

  options.top_services = absl::GetFlag(FLAGS_top_services);
  if (options.top_services > 1000) return fail("--top_services must be in 0..1000");
  if (options.top_services > 0 && design == "tokio-style") {
    return fail(
        "--top_services applies to the leanchan design (the baseline has no registry); use "
        "--design=leanchan or both");
  }

  std::printf(
      "| design | services | channel B/idle service | heap B/service idle | RSS B/service idle | "
      "heap B/service peak | heap B/service drained | RSS B/service drained | events/s | "
      "p50 us | p99 us | p999 us | sent | refused (full) | lost | duplicated | services "
      "added/removed | checker CPU ns/event | workers CPU ns/event (each) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      "---:|\n");
  bool all_ok = true;
  std::vector<proxy::Report> series;    // soak mode: printed after the table
  std::vector<proxy::Report> budgeted;  // --budget_bytes: printed after the table
  std::vector<proxy::Report> listed;    // --top_services: printed after the table
  // Progress on stderr: each row runs for --seconds plus setup and drain.
  const std::size_t rows =
      counts.size() * (design == "both" ? 2 : 1) * static_cast<std::size_t>(runs);
  std::map<std::pair<std::size_t, std::string>, std::vector<proxy::Report>> by_row;
  std::size_t row = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int run = 0; run < runs; ++run)
    for (std::size_t count : counts) {
      options.services = count;
      for (const char* name : {"leanchan", "tokio-style"}) {
        if (design != "both" && design != name) continue;
        ++row;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::fprintf(stderr, "[%zu/%zu] %s, %zu services (%.0f s elapsed, at least %.0f s left)\n",
                     row, rows, name, count, elapsed,
                     static_cast<double>(rows - row + 1) * options.seconds);
        const proxy::Report r = std::string(name) == "leanchan" ? proxy::run_leanchan(options)
                                                                : proxy::run_tokio_style(options);
        all_ok = all_ok && r.ok();
        std::printf(
            "| %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | "
            "%llu "
            "| "
            "%llu | %llu | %llu | %llu/%llu | %.0f | %.0f (%s) |\n",
            r.design.c_str(), r.services, r.channel_bytes_idle, r.heap_idle, r.rss_idle,
            r.heap_peak, r.heap_drained, r.rss_drained, r.events_per_second, r.p50_us, r.p99_us,
            r.p999_us, static_cast<unsigned long long>(r.sent),
            static_cast<unsigned long long>(r.refused), static_cast<unsigned long long>(r.lost),
            static_cast<unsigned long long>(r.duplicated),
            static_cast<unsigned long long>(r.services_added),
            static_cast<unsigned long long>(r.services_removed), r.checker_cpu_ns_per_event,
            r.workers_cpu_ns_per_event, each_worker(r).c_str());
        std::fflush(stdout);
        if (!r.rss_series.empty()) series.push_back(r);
        if (r.budgeted) budgeted.push_back(r);
        if (r.listed) listed.push_back(r);
        by_row[{count, r.design}].push_back(r);
      }
    }
  if (runs > 1) print_spread(by_row, runs);
  for (const proxy::Report& r : budgeted) {
    std::printf(
        "\nBudget, %s, %zu services: limit %zu B, held at the end %zu B, high water %zu B "
        "(%.0f B/service), %zu allocations live; events refused for budget %llu (of %llu "
        "sent + refused), services whose channel the budget refused %llu\n",
        r.design.c_str(), r.services, r.budget.limit, r.budget.held, r.budget.high_water,
        static_cast<double>(r.budget.high_water) / static_cast<double>(r.services),
        r.budget.live_allocations, static_cast<unsigned long long>(r.refused_budget),
        static_cast<unsigned long long>(r.sent + r.refused + r.refused_budget),
        static_cast<unsigned long long>(r.services_refused_budget));
    std::printf(
        "  the budget's figures: channels %zu, blocks %zu; refused: %llu channels, %llu blocks\n",
        r.budget.channels, r.budget.blocks,
        static_cast<unsigned long long>(r.budget.refused_channels),
        static_cast<unsigned long long>(r.budget.refused_blocks));
  }
  for (const proxy::Report& r : listed) {
    std::printf(
        "\nListed, %s, %zu services, after the last burst: %zu channels listed, %zu B in all "
        "(%.0f B/service); %d walks, the longest %.2f ms; the %zu holding the most (service "
        "key: bytes):",
        r.design.c_str(), r.services, r.group.channels, r.group.bytes,
        static_cast<double>(r.group.bytes) /
            static_cast<double>(std::max<std::size_t>(1, r.group.channels)),
        r.walks, r.walk_ms, r.group.top.size());
    for (const auto& usage : r.group.top) {
      std::printf(" %llu: %zu", static_cast<unsigned long long>(usage.tag), usage.bytes);
    }
    std::printf("\n");
  }
  for (const proxy::Report& r : series) {
    std::printf("\nRSS B/service above the start, %s, %zu services (seconds: bytes):",
                r.design.c_str(), r.services);
    for (const auto& [seconds, bytes] : r.rss_series) std::printf(" %.0f:%.0f", seconds, bytes);
    std::printf("\n");
  }
  return leanchan::cli::finish_output("leanchan-proxy-fanout", all_ok ? 0 : 1);
}
