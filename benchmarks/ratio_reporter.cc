// SPDX-License-Identifier: MIT
#include "ratio_reporter.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace leanchan::bench {

void RatioReporter::report_progress(const std::vector<Run>& runs) {
  // Progress on stderr: which benchmark, how many are left (when the caller
  // said how many there are, LEANCHAN_BENCH_TOTAL), and an estimate of the
  // time left from the average so far.
  if (runs.empty()) return;
  ++done_;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const char* total_text = std::getenv("LEANCHAN_BENCH_TOTAL");
  const long total = total_text != nullptr ? std::atol(total_text) : 0;
  if (total > done_) {
    const double left = elapsed / static_cast<double>(done_) * static_cast<double>(total - done_);
    std::fprintf(stderr, "[%ld/%ld] %s (%.0f s elapsed, about %.0f s left)\n", done_, total,
                 runs.front().benchmark_name().c_str(), elapsed, left);
  } else {
    std::fprintf(stderr, "[%ld] %s (%.0f s elapsed)\n", done_,
                 runs.front().benchmark_name().c_str(), elapsed);
  }
}

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  report_progress(runs);
  for (const Run& run : runs) {
    if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
    const std::string name = run.benchmark_name();
    const auto first = name.find('/');
    const auto second = name.find('/', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string suite = name.substr(0, first);
    const std::string design = name.substr(first + 1, second - first - 1);
    std::string workload = name.substr(second + 1);
    // Drop Google Benchmark's own suffixes ("/real_time", "/min_time:...").
    for (const char* suffix : {"/real_time", "/process_time"}) {
      if (auto at = workload.find(suffix); at != std::string::npos) workload.erase(at);
    }
    Figure figure;
    if (auto it = run.counters.find("items_per_second"); it != run.counters.end()) {
      figure.items_per_second = it->second.value;
    }
    figure.real_time_ns = run.GetAdjustedRealTime();
    figures_[suite][workload][design].runs.push_back(figure);
    if (std::find(designs_.begin(), designs_.end(), design) == designs_.end()) {
      designs_.push_back(design);
    }
  }
}

RatioReporter::Figure RatioReporter::Figures::median() const {
  std::vector<double> rates;
  std::vector<double> times;
  for (const Figure& run : runs) {
    rates.push_back(run.items_per_second);
    times.push_back(run.real_time_ns);
  }
  const auto middle = [](std::vector<double>& values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t half = values.size() / 2;
    return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2;
  };
  return {middle(rates), middle(times)};
}

void RatioReporter::PrintRatios() const {
  std::printf("\n## Ratios against %s (same run; > 1.00 means faster than %s)\n", baseline_.c_str(),
              baseline_.c_str());
  // Designs in a fixed order whatever order they ran in (random with
  // interleaved repetitions): by name, numbers compared as numbers (b4
  // before b8 before b32).
  std::vector<std::string> designs = designs_;
  std::sort(designs.begin(), designs.end(), [](const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (std::isdigit(static_cast<unsigned char>(a[i])) &&
          std::isdigit(static_cast<unsigned char>(b[j]))) {
        std::size_t i_end = i, j_end = j;
        while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
        while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
        const unsigned long x = std::stoul(a.substr(i, i_end - i));
        const unsigned long y = std::stoul(b.substr(j, j_end - j));
        if (x != y) return x < y;
        i = i_end;
        j = j_end;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
      }
    }
    return a.size() - i < b.size() - j;
  });
  for (const auto& [suite, workloads] : figures_) {
    // A suite with no baseline figure (the cache-line hand-off) has no ratios.
    bool has_baseline = false;
    for (const auto& entry : workloads) has_baseline |= entry.second.count(baseline_) != 0;
    if (!has_baseline) continue;
    std::printf("\n### %s\n\n| workload |", suite.c_str());
    std::vector<std::string> shown;
    for (const std::string& design : designs) {
      if (design == baseline_) continue;
      bool in_suite = false;  // a design measured only elsewhere gets no column
      for (const auto& entry : workloads) in_suite |= entry.second.count(design) != 0;
      if (!in_suite) continue;
      shown.push_back(design);
      std::printf(" %s |", design.c_str());
    }
    std::printf("\n|---|");
    for (std::size_t i = 0; i < shown.size(); ++i) std::printf("---:|");
    std::printf("\n");
    for (const auto& [workload, by_design] : workloads) {
      auto base = by_design.find(baseline_);
      if (base == by_design.end()) continue;
      std::printf("| %s |", workload.c_str());
      for (const std::string& design : shown) {
        auto it = by_design.find(design);
        if (it == by_design.end()) {
          std::printf(" |");
          continue;
        }
        const Figure mine = it->second.median();
        const Figure theirs = base->second.median();
        double ratio = 0;
        if (theirs.items_per_second > 0 && mine.items_per_second > 0) {
          ratio = mine.items_per_second / theirs.items_per_second;
        } else if (mine.real_time_ns > 0) {
          ratio = theirs.real_time_ns / mine.real_time_ns;
        }
        std::printf(" %.2f |", ratio);
      }
      std::printf("\n");
    }
  }
  std::fflush(stdout);
}

int run_with_ratios(int argc, char** argv, const std::string& baseline) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  RatioReporter reporter(baseline);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}

}  // namespace leanchan::bench
