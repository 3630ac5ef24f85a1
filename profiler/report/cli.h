// SPDX-License-Identifier: MIT
// Command-line conventions shared by the programs that take Abseil flags
// (leanchan-memtable and the examples, whose targets add this folder to
// their include path): --help and -h print the usage and the program's own flags to
// standard output and exit 0; Abseil's own parse errors carry the program's
// name; a positional argument is an error; a comma-separated list value has
// no empty element. Header-only: it needs only absl::flags and
// absl::flags_parse, which every one of those programs links.
#ifndef LEANCHAN_PROFILER_REPORT_CLI_H_
#define LEANCHAN_PROFILER_REPORT_CLI_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"

namespace leanchan::cli {

// One line per flag defined in `file` (a CommandLineFlag::Filename()), sorted
// by name, as Abseil's --help writes them: --name (help); default: value;
inline std::string own_flags_help(const std::string& file) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& entry : absl::GetAllFlags()) {
    const absl::CommandLineFlag* flag = entry.second;
    if (!flag->IsRetired() && flag->Filename() == file) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string out;
  for (const absl::CommandLineFlag* flag : flags) {
    std::string value = flag->DefaultValue();
    if (flag->IsOfType<std::string>()) value = "\"" + value + "\"";
    out +=
        "  --" + std::string(flag->Name()) + " (" + flag->Help() + "); default: " + value + ";\n";
  }
  return out;
}

// Writes every line that goes through it to `out` behind `prefix`: Abseil's
// parse errors ("ERROR: Unknown command line flag 'x'") go to std::cerr, and
// this makes them start with the program's name.
class LinePrefixBuffer : public std::streambuf {
 public:
  LinePrefixBuffer(std::streambuf* out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? 0 : c;
    if (at_line_start_) {
      const auto size = static_cast<std::streamsize>(prefix_.size());
      if (out_->sputn(prefix_.data(), size) != size) return traits_type::eof();
    }
    at_line_start_ = traits_type::to_char_type(c) == '\n';
    return out_->sputc(traits_type::to_char_type(c));
  }
  int sync() override { return out_->pubsync(); }

 private:
  std::streambuf* out_;
  std::string prefix_;
  bool at_line_start_ = true;
};

// Parses the command line with Abseil, after these conventions:
// - --help, -h or -help (before a "--"): prints `usage`, then the flags
//   defined in the file of `own_flag` (the program's own), to standard
//   output, and exits 0. --helpfull and --help=substring stay Abseil's
//   (they list the program's own flags too, Abseil's with --helpfull).
// - Abseil's errors (an unknown flag, a value that does not parse) are
//   prefixed with "<program>: " and exit 1, as Abseil does.
// - A positional argument (anything that is not a flag, or anything after
//   "--") is an error: "<program>: unexpected argument 'x' ...", exit code 2.
// Returns the exit code when the program should stop, nothing to go on.
[[nodiscard]] inline std::optional<int> parse_command_line(std::string_view program,
                                                           const std::string& usage,
                                                           const absl::CommandLineFlag& own_flag,
                                                           int argc, char** argv) {
  const std::string own_file = own_flag.Filename();
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [own_file](absl::string_view file) {
    return file == own_file;
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::SetProgramUsageMessage(usage);

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      std::string text = std::string(absl::ProgramUsageMessage()) + "\n\nFlags:\n" +
                         own_flags_help(own_file) +
                         "\n--helpfull lists Abseil's own flags as well.\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 2;
    }
  }

  // Leaked on purpose: if Abseil exits from inside ParseCommandLine, the
  // stream still points here while the standard streams are flushed.
  auto* prefixed = new LinePrefixBuffer(std::cerr.rdbuf(), std::string(program) + ": ");
  std::streambuf* const saved = std::cerr.rdbuf(prefixed);
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::cerr.rdbuf(saved);
  delete prefixed;

  if (positional.size() > 1) {
    std::cerr << program << ": unexpected argument '" << positional[1]
              << "' (this program takes only --flags; see --help)\n";
    return 2;
  }
  return std::nullopt;
}

// Splits a comma-separated flag value into its elements, each trimmed of
// spaces. An empty value, an empty element (as in "1,,2" or "8,") or an
// element listed twice (it would measure or print the same row twice) is
// an error: returns false with "--flag: ..." in `error`.
inline bool split_list(std::string_view flag, std::string_view text,
                       std::vector<std::string>* items, std::string* error) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  items->clear();
  if (text.find_first_not_of(kSpace) == std::string_view::npos) {
    *error = "--" + std::string(flag) + ": the list is empty";
    return false;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t first = item.find_first_not_of(kSpace);
    if (first == std::string_view::npos) {
      *error = "--" + std::string(flag) + ": element " + std::to_string(items->size() + 1) +
               " of '" + std::string(text) + "' is empty";
      return false;
    }
    item = item.substr(first, item.find_last_not_of(kSpace) - first + 1);
    if (std::find(items->begin(), items->end(), item) != items->end()) {
      *error = "--" + std::string(flag) + ": '" + std::string(item) + "' is listed twice in '" +
               std::string(text) + "'";
      return false;
    }
    items->emplace_back(item);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

// At the end of a program that printed its results to standard output
// (C stdio or std::cout): `exit_code` if everything reached it, else
// "<program>: cannot write to standard output" and 2 (a full disk, a
// closed descriptor), so that a script never takes a lost table for a run.
[[nodiscard]] inline int finish_output(std::string_view program, int exit_code) {
  std::cout.flush();
  const bool c_ok = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  if (c_ok && std::cout) return exit_code;
  std::cerr << program << ": cannot write to standard output\n";
  return 2;
}

}  // namespace leanchan::cli

#endif  // LEANCHAN_PROFILER_REPORT_CLI_H_
