#include "ratio_reporter.h"

#include <algorithm>
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
    figures_[suite][workload][design] = figure;
    if (std::find(designs_.begin(), designs_.end(), design) == designs_.end()) {
      designs_.push_back(design);
    }
  }
}

void RatioReporter::PrintRatios() const {
  std::printf("\n## Ratios against %s (same run; > 1.00 means faster than %s)\n", baseline_.c_str(),
              baseline_.c_str());
  for (const auto& [suite, workloads] : figures_) {
    // A suite with no baseline figure (the cache-line hand-off) has no ratios.
    bool has_baseline = false;
    for (const auto& entry : workloads) has_baseline |= entry.second.count(baseline_) != 0;
    if (!has_baseline) continue;
    std::printf("\n### %s\n\n| workload |", suite.c_str());
    std::vector<std::string> shown;
    for (const std::string& design : designs_) {
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
        double ratio = 0;
        if (base->second.items_per_second > 0 && it->second.items_per_second > 0) {
          ratio = it->second.items_per_second / base->second.items_per_second;
        } else if (it->second.real_time_ns > 0) {
          ratio = base->second.real_time_ns / it->second.real_time_ns;
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
