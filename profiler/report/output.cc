// SPDX-License-Identifier: MIT
#include "output.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "leanchan/profiler/heap_counters.h"

namespace leanchan::report {
namespace {

std::string memory_markdown(const std::vector<const Design*>& designs,
                            const std::vector<MemoryRow>& rows) {
  if (rows.empty()) return {};
  std::string out =
      absl::StrCat("## Heap bytes per channel (allocator: ", profiler::heap_backend_name(),
                   ")\n\nRequested heap bytes relative to just before creation, one sender and one "
                   "receiver alive. fill = `capacity` sends, drain = then receive them all. "
                   "\"predicted\" is the design's formula; a mismatch is flagged.\n\n"
                   "| design | msg bytes | capacity | create | fill | drain | allocs to fill | "
                   "predicted create / fill / drain | ok |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const MemoryRow& row : rows) {
    absl::StrAppendFormat(&out, "| %s | %d | %d | %d | %d | %d | %d | %d / %d / %d | %s |\n",
                          row.design, row.message_bytes, row.capacity, row.create, row.fill,
                          row.drain, row.fill_allocations, row.predicted.create, row.predicted.fill,
                          row.predicted.drain, row.matches() ? "yes" : "**MISMATCH**");
  }
  absl::StrAppend(&out, "\nFormulas (S = message bytes, C = capacity):\n\n");
  for (const Design* design : designs) {
    absl::StrAppend(&out, "- ", design->name, ": ", design->formulas, "\n");
  }
  absl::StrAppend(&out, "\n");
  return out;
}

std::string many_markdown(const std::vector<ManyChannelsRow>& many) {
  std::string out;
  if (!many.empty()) {
    absl::StrAppend(
        &out, "## Many channels of 24-byte messages (allocator: ", profiler::heap_backend_name(),
        ")\n\nPer channel, relative to before creation: heap = requested bytes, RSS = "
        "resident memory. burst = that many messages sent into every channel; drained = "
        "all received again; trimmed = after asking the allocator to return free memory "
        "(malloc_trim / mi_collect). retain = the channel's retention policy (none: a drained "
        "channel keeps no block; one: it keeps one). The policy's price: a second burst into "
        "the drained channels, its allocations per channel and its send time per message. "
        "memory = where the channels' memory comes from (default: the global operator new; "
        "pool: a leanchan::BlockPool, whose pages are not heap and show in RSS only). "
        "Each row runs in a fresh process.\n\n"
        "| design | retain | channels | heap idle | heap burst | heap drained | RSS idle | "
        "RSS burst | RSS drained | RSS trimmed | 2nd burst allocs | 2nd burst ns/msg | memory |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const ManyChannelsRow& row : many) {
      absl::StrAppendFormat(
          &out,
          "| %s | %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.1f | %s |\n",
          row.design, row.retain, row.channels, row.heap_idle, row.heap_burst, row.heap_drained,
          row.rss_idle, row.rss_burst, row.rss_drained, row.rss_trimmed, row.burst2_allocs,
          row.burst2_ns_per_msg, row.memory);
    }
  }
  return out;
}

std::string csv(const std::vector<MemoryRow>& rows, const std::vector<ManyChannelsRow>& many) {
  std::string out =
      "table,allocator,design,message_bytes,capacity,create,fill,drain,fill_allocations,"
      "predicted_create,predicted_fill,predicted_drain,matches\n";
  const char* allocator = profiler::heap_backend_name();
  for (const MemoryRow& row : rows) {
    absl::StrAppendFormat(&out, "memory,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", allocator,
                          row.design, row.message_bytes, row.capacity, row.create, row.fill,
                          row.drain, row.fill_allocations, row.predicted.create, row.predicted.fill,
                          row.predicted.drain, row.matches() ? "true" : "false");
  }
  if (!many.empty()) {
    absl::StrAppend(&out,
                    "\ntable,allocator,design,channels,burst,heap_idle,heap_burst,heap_drained,"
                    "rss_idle,rss_burst,rss_drained,rss_trimmed,retain,burst2_allocs,"
                    "burst2_ns_per_msg,memory\n");
    for (const ManyChannelsRow& row : many) {
      absl::StrAppendFormat(&out,
                            "many_channels,%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%s,%.2f,"
                            "%.1f,%s\n",
                            row.allocator, row.design, row.channels, row.burst, row.heap_idle,
                            row.heap_burst, row.heap_drained, row.rss_idle, row.rss_burst,
                            row.rss_drained, row.rss_trimmed, row.retain, row.burst2_allocs,
                            row.burst2_ns_per_msg, row.memory);
    }
  }
  return out;
}

std::string json(const std::vector<MemoryRow>& rows, const std::vector<ManyChannelsRow>& many) {
  std::string out =
      absl::StrCat("{\n  \"allocator\": \"", profiler::heap_backend_name(), "\",\n  \"memory\": [");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MemoryRow& row = rows[i];
    absl::StrAppendFormat(
        &out,
        "%s\n    {\"design\": \"%s\", \"message_bytes\": %d, \"capacity\": %d, \"create\": %d, "
        "\"fill\": %d, \"drain\": %d, \"fill_allocations\": %d, \"predicted\": {\"create\": %d, "
        "\"fill\": %d, \"drain\": %d}, \"matches\": %s}",
        i == 0 ? "" : ",", row.design, row.message_bytes, row.capacity, row.create, row.fill,
        row.drain, row.fill_allocations, row.predicted.create, row.predicted.fill,
        row.predicted.drain, row.matches() ? "true" : "false");
  }
  absl::StrAppend(&out, "\n  ],\n  \"many_channels\": [");
  for (std::size_t i = 0; i < many.size(); ++i) {
    const ManyChannelsRow& row = many[i];
    absl::StrAppendFormat(
        &out,
        "%s\n    {\"design\": \"%s\", \"channels\": %d, \"burst\": %d, \"heap_idle\": %.1f, "
        "\"heap_burst\": %.1f, \"heap_drained\": %.1f, \"rss_idle\": %.1f, \"rss_burst\": %.1f, "
        "\"rss_drained\": %.1f, \"rss_trimmed\": %.1f, \"retain\": \"%s\", "
        "\"burst2_allocs\": %.2f, \"burst2_ns_per_msg\": %.1f, \"memory\": \"%s\"}",
        i == 0 ? "" : ",", row.design, row.channels, row.burst, row.heap_idle, row.heap_burst,
        row.heap_drained, row.rss_idle, row.rss_burst, row.rss_drained, row.rss_trimmed, row.retain,
        row.burst2_allocs, row.burst2_ns_per_msg, row.memory);
  }
  absl::StrAppend(&out, "\n  ]\n}\n");
  return out;
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string format_report(Format format, const std::vector<const Design*>& designs,
                          const std::vector<MemoryRow>& rows,
                          const std::vector<ManyChannelsRow>& many) {
  switch (format) {
    case Format::kMarkdown: return memory_markdown(designs, rows) + many_markdown(many);
    case Format::kCsv: return csv(rows, many);
    case Format::kJson: return json(rows, many);
  }
  return {};
}

}  // namespace leanchan::report
