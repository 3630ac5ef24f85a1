// SPDX-License-Identifier: MIT
// A console reporter that also remembers each run, then prints, per workload,
// every design's figure divided by the baseline's from the same run.
// Benchmark names are "<suite>/<design>/<workload...>".
#ifndef LEANCHAN_BENCHMARKS_RATIO_REPORTER_H_
#define LEANCHAN_BENCHMARKS_RATIO_REPORTER_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace leanchan::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // `metric`: "items_per_second" (higher is better) or "real_time" (lower
  // is better; the ratio is inverted so that > 1 always means faster).
  explicit RatioReporter(std::string baseline) : baseline_(std::move(baseline)) {}

  void ReportRuns(const std::vector<Run>& runs) override;
  // Prints the ratio table as Markdown to stdout.
  void PrintRatios() const;

 private:
  struct Figure {
    double items_per_second = 0;  // 0 when the suite measures time
    double real_time_ns = 0;
  };
  // Every repetition of one benchmark (--benchmark_repetitions); the ratio
  // uses their median, so one slow repetition (a vCPU moved, a neighbour
  // ran) does not decide it.
  struct Figures {
    std::vector<Figure> runs;
    Figure median() const;
  };
  void report_progress(const std::vector<Run>& runs);

  std::string baseline_;
  long done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // suite -> workload -> design -> figure
  std::map<std::string, std::map<std::string, std::map<std::string, Figures>>> figures_;
  std::vector<std::string> designs_;
};

// The benchmark executables' main: initialize, run everything registered
// with a RatioReporter against `baseline`, print the ratio table. Returns the
// process exit code (2 for an unrecognised flag).
int run_with_ratios(int argc, char** argv, const std::string& baseline);

}  // namespace leanchan::bench

#endif  // LEANCHAN_BENCHMARKS_RATIO_REPORTER_H_
