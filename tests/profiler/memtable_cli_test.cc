// SPDX-License-Identifier: MIT
// The report executable's error paths: exit code 2 and a one-line message
// naming the problem; its command-line conventions (--help and -h on stdout
// with exit 0, no stray argument, no empty list element, no selection that
// selects nothing); and a small successful run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together, or only one of them
};

enum class Capture { kBoth, kStdout, kStderr };

// A file name of this process's own in the temporary directory.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "memtable_cli_" + std::to_string(::getpid()) + "_" + name;
}

CliResult run_memtable(const std::string& arguments, Capture capture = Capture::kBoth) {
  // One file per test and process: ctest runs these tests in parallel
  // processes, and two builds' runs (release and a sanitizer's) may share
  // the temporary directory.
  const std::string log = temp_path(
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".txt");
  const char* redirect = capture == Capture::kBoth     ? " > LOG 2>&1"
                         : capture == Capture::kStdout ? " > LOG 2>/dev/null"
                                                       : " 2> LOG >/dev/null";
  std::string redirection = redirect;
  redirection.replace(redirection.find("LOG"), 3, log);
  const std::string command = std::string(LEANCHAN_MEMTABLE_PATH) + " " + arguments + redirection;
  const int status = std::system(command.c_str());
  std::stringstream text;
  {
    std::ifstream in(log);
    text << in.rdbuf();
  }
  std::remove(log.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

// A small report, so that a run that wrongly goes ahead stays short.
constexpr const char* kSmall =
    "--designs=leanchan-b8 --message_sizes=8 --capacities=1 --many_channels=none";

void expect_usage(const CliResult& run) {
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Prints the heap cost of channels"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("No flags matched"), std::string::npos) << run.output;
  for (const char* flag :
       {"--designs", "--message_sizes", "--capacities", "--format", "--output", "--many_channels",
        "--many_capacity", "--burst", "--retain", "--memory", "--tables"}) {
    EXPECT_NE(run.output.find(flag), std::string::npos) << flag << "\n" << run.output;
  }
  EXPECT_NE(run.output.find("--designs (Comma-separated designs"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("default: \"all\""), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--burst (Messages sent into every channel in the many-channels "
                            "table); default: 16;"),
            std::string::npos)
      << run.output;
  // Only the program's own flags: none of Abseil's.
  EXPECT_EQ(run.output.find("--flagfile"), std::string::npos) << run.output;
}

TEST(MemtableCli, HelpPrintsUsageAndFlagsToStdoutAndExitsZero) {
  expect_usage(run_memtable("--help", Capture::kStdout));
  EXPECT_EQ(run_memtable("--help", Capture::kStderr).output, "");
}

TEST(MemtableCli, ShortHelpPrintsUsageAndFlagsToStdoutAndExitsZero) {
  expect_usage(run_memtable("-h", Capture::kStdout));
  EXPECT_EQ(run_memtable("-h", Capture::kStderr).output, "");
}

TEST(MemtableCli, StrayArgumentExitsTwoAndNamesIt) {
  const CliResult run = run_memtable(std::string("extra ") + kSmall, Capture::kStderr);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output.rfind("leanchan-memtable: unexpected argument 'extra'", 0), 0) << run.output;
}

TEST(MemtableCli, ArgumentAfterDoubleDashIsStray) {
  const CliResult run = run_memtable(std::string(kSmall) + " -- more", Capture::kStderr);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("leanchan-memtable: unexpected argument 'more'"), std::string::npos)
      << run.output;
}

// Lists with an empty element, and selections that measure nothing (the
// baseline's channels take no memory resource, so pool memory has no
// many-channels row for it: that run printed nothing and exited 0): exit
// 2 before anything is measured, and say why.
TEST(MemtableCli, BadSelectionsExitTwoAndSayWhy) {
  struct Case {
    const char* arguments;
    const char* message;
  };
  for (const Case& c : {
           Case{"--designs=leanchan-b8,, --message_sizes=8 --capacities=1 --many_channels=none",
                "leanchan-memtable: --designs: element 2 of 'leanchan-b8,,' is empty"},
           Case{"--designs=leanchan-b8 --message_sizes=8,,24 --capacities=1 --many_channels=none",
                "leanchan-memtable: --message_sizes: element 2 of '8,,24' is empty"},
           Case{"--designs=leanchan-b8 --message_sizes=8 --capacities=1,,2 --many_channels=none",
                "leanchan-memtable: --capacities: element 2 of '1,,2' is empty"},
           Case{"--designs=leanchan-b8 --message_sizes=8 --capacities=,1 --many_channels=none",
                "leanchan-memtable: --capacities: element 1 of ',1' is empty"},
           Case{"--designs=leanchan-b8 --tables=many --many_channels=10,",
                "leanchan-memtable: --many_channels: element 2 of '10,' is empty"},
           Case{"--designs=leanchan-b8 --tables=many --many_channels=10 --retain=none,,one",
                "leanchan-memtable: --retain: element 2 of 'none,,one' is empty"},
           Case{"--designs=leanchan-b8 --message_sizes=8 --capacities=1 --many_channels=none "
                "--tables=memory,",
                "leanchan-memtable: --tables: element 2 of 'memory,' is empty"},
           Case{"--tables=many --many_channels=none",
                "leanchan-memtable: --tables=many with --many_channels=none selects nothing to "
                "measure"},
           Case{"--designs=tokio-style --memory=pool --tables=many --many_channels=10",
                "leanchan-memtable: --tables=many with --memory=pool selects nothing to measure"},
           Case{"--designs=all,leanchan-b8 --message_sizes=8 --capacities=1 --many_channels=none",
                "leanchan-memtable: --designs: 'all' stands alone"},
           Case{"--designs=leanchan-b8,leanchan-b8 --message_sizes=8 --capacities=1 "
                "--many_channels=none",
                "leanchan-memtable: --designs: 'leanchan-b8' is listed twice"},
           Case{"--designs=leanchan-b8 --message_sizes=8 --capacities=1,1 --many_channels=none",
                "leanchan-memtable: --capacities: '1' is listed twice"},
       }) {
    const CliResult run = run_memtable(c.arguments, Capture::kStderr);
    EXPECT_EQ(run.exit_code, 2) << c.arguments << "\n" << run.output;
    EXPECT_EQ(run.output.rfind(c.message, 0), 0) << c.arguments << "\n" << run.output;
  }
}

TEST(MemtableCli, EmptyManyChannelsListExitsTwo) {
  const CliResult run = run_memtable("--designs=leanchan-b8 --tables=many --many_channels=");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("leanchan-memtable: --many_channels: the list is empty"),
            std::string::npos)
      << run.output;
}

TEST(MemtableCli, AbseilErrorsStartWithTheProgramName) {
  const CliResult run = run_memtable("--burst=abc", Capture::kStderr);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_EQ(run.output.rfind("leanchan-memtable: ERROR: Illegal value 'abc' specified for flag "
                             "'burst'",
                             0),
            0)
      << run.output;
}

TEST(MemtableCli, UnknownDesignExitsTwoAndNamesIt) {
  const CliResult run = run_memtable("--designs=leanchan-b8,crossbeam");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("leanchan-memtable: --designs: unknown design 'crossbeam'"),
            std::string::npos)
      << run.output;
}

TEST(MemtableCli, UnbuiltMessageSizeExitsTwo) {
  const CliResult run = run_memtable("--message_sizes=100");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("message size 100 is not built into this report"), std::string::npos)
      << run.output;
}

TEST(MemtableCli, CapacityZeroExitsTwo) {
  const CliResult run = run_memtable("--capacities=0");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("capacity must be between 1 and 16777216, got 0"), std::string::npos)
      << run.output;
}

TEST(MemtableCli, UnwritableOutputExitsTwo) {
  const CliResult run = run_memtable("--output=/nonexistent-dir/report.md");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("cannot write --output=/nonexistent-dir/report.md: No such file"),
            std::string::npos)
      << run.output;
}

TEST(MemtableCli, UnknownFlagFails) {
  const CliResult run = run_memtable("--no_such_flag=1");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("leanchan-memtable: ERROR: Unknown command line flag 'no_such_flag'"),
            std::string::npos)
      << run.output;
}

TEST(MemtableCli, WritesCsvToAFile) {
  const std::string path = temp_path("report.csv");
  const CliResult run = run_memtable(
      "--designs=leanchan-b8 --message_sizes=24 --capacities=16 "
      "--many_channels=none --format=csv --output=" +
      path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::stringstream text;
  {
    std::ifstream in(path);
    text << in.rdbuf();
  }
  std::remove(path.c_str());
  // B = 8, S = 24, C = 16: create 64, fill 64 + 2 * (16 + 8 * 24) = 480 in 2
  // allocations, drain 64 + (16 + 8 * 24) = 272; the prediction equals them.
  EXPECT_NE(text.str().find("memory,glibc malloc,leanchan-b8,24,16,64,480,272,2,64,480,272,true"),
            std::string::npos)
      << text.str();
}

}  // namespace
