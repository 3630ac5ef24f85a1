// SPDX-License-Identifier: MIT
// Writing the report's tables as Markdown, CSV or JSON.
#ifndef LEANCHAN_PROFILER_REPORT_OUTPUT_H_
#define LEANCHAN_PROFILER_REPORT_OUTPUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "designs.h"
#include "memtable.h"
#include "services.h"

namespace leanchan::report {

enum class Format { kMarkdown, kCsv, kJson };
std::optional<Format> parse_format(std::string_view name);

// The whole report: the memory table (with each design's formulas as a
// legend), if `many` is not empty the many-channels table, and if `services`
// is not empty the services table (with each service's formulas).
std::string format_report(Format format, const std::vector<const Design*>& designs,
                          const std::vector<MemoryRow>& rows,
                          const std::vector<ManyChannelsRow>& many,
                          const std::vector<ServiceRow>& services = {});

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_OUTPUT_H_
