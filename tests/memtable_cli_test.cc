// SPDX-License-Identifier: MIT
// The report executable's error paths: exit code 2 and a one-line message
// naming the problem; and a small successful run.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

CliResult run_memtable(const std::string& arguments) {
  // One file per test: ctest runs these tests in parallel processes.
  const std::string log = ::testing::TempDir() + "memtable_cli_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
  const std::string command =
      std::string(LEANCHAN_MEMTABLE_PATH) + " " + arguments + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(MemtableCli, HelpListsTheProgramsFlagsWithDefaults) {
  const CliResult run = run_memtable("--help");
  EXPECT_EQ(run.exit_code, 1) << run.output;  // Abseil exits 1 after printing help
  EXPECT_EQ(run.output.find("No flags matched"), std::string::npos) << run.output;
  for (const char* flag :
       {"--designs", "--message_sizes", "--capacities", "--format", "--tables"}) {
    EXPECT_NE(run.output.find(flag), std::string::npos) << flag << "\n" << run.output;
  }
  EXPECT_NE(run.output.find("default: \"all\""), std::string::npos) << run.output;
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
  EXPECT_NE(run.output.find("no_such_flag"), std::string::npos) << run.output;
}

TEST(MemtableCli, WritesCsvToAFile) {
  const std::string path = ::testing::TempDir() + "memtable_cli_report.csv";
  const CliResult run = run_memtable(
      "--designs=leanchan-b8 --message_sizes=24 --capacities=16 "
      "--many_channels=none --format=csv --output=" +
      path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  // B = 8, S = 24, C = 16: create 64, fill 64 + 2 * (16 + 8 * 24) = 480 in 2
  // allocations, drain 64 + (16 + 8 * 24) = 272; the prediction equals them.
  EXPECT_NE(text.str().find("memory,glibc malloc,leanchan-b8,24,16,64,480,272,2,64,480,272,true"),
            std::string::npos)
      << text.str();
}

}  // namespace
