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

std::string services_markdown(const std::vector<ServiceRow>& services) {
  if (services.empty()) return {};
  std::string out = absl::StrCat(
      "## Heap bytes per service (allocator: ", profiler::heap_backend_name(),
      ")\n\nA service: one channel, channel<T>(capacity), with what the program keeps to serve "
      "it, allocated on the heap so that every byte is counted. Requested heap bytes per "
      "service (",
      kServicesPerRow,
      " made together), relative to just before: idle = waiting for a message; fill = after "
      "`capacity` sends, not served yet; drain = served (every message taken) and waiting "
      "again. \"predicted\" is the service's formula; a mismatch is flagged.\n\n"
      "| service | msg bytes | capacity | idle | fill | drain | predicted idle / fill / drain | "
      "ok |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const ServiceRow& row : services) {
    absl::StrAppendFormat(&out, "| %s | %d | %d | %d | %d | %d | %d / %d / %d | %s |\n",
                          row.service, row.message_bytes, row.capacity, row.idle, row.fill,
                          row.drain, row.predicted.create, row.predicted.fill, row.predicted.drain,
                          row.matches() ? "yes" : "**MISMATCH**");
  }
  absl::StrAppend(&out,
                  "\nFormulas (S = message bytes, C = capacity): the channel's, as "
                  "leanchan-default's (b = min(default_block_size<T>, C)): idle 64, fill 64 + "
                  "ceil(C/b)·(16 + b·S), drain 64 + 16 + b·S; then what each service holds:\n\n");
  for (const Service& service : all_services()) {
    absl::StrAppend(&out, "- ", service.name, " (", service.holds, "): ", service.formulas, "\n");
  }
#if !LEANCHAN_REPORT_HAVE_ASIO
  absl::StrAppend(&out,
                  "- leanchan::asio: not measured (the report was built without Asio's "
                  "headers)\n");
#endif
  return out;
}

std::string csv(const std::vector<MemoryRow>& rows, const std::vector<ManyChannelsRow>& many,
                const std::vector<ServiceRow>& services) {
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
  if (!services.empty()) {
    absl::StrAppend(&out,
                    "\ntable,allocator,service,message_bytes,capacity,services,idle,fill,drain,"
                    "predicted_idle,predicted_fill,predicted_drain,matches\n");
    for (const ServiceRow& row : services) {
      absl::StrAppendFormat(&out, "services,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", allocator,
                            row.service, row.message_bytes, row.capacity, row.services, row.idle,
                            row.fill, row.drain, row.predicted.create, row.predicted.fill,
                            row.predicted.drain, row.matches() ? "true" : "false");
    }
  }
  return out;
}

std::string json(const std::vector<MemoryRow>& rows, const std::vector<ManyChannelsRow>& many,
                 const std::vector<ServiceRow>& services) {
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
  absl::StrAppend(&out, "\n  ],\n  \"services\": [");
  for (std::size_t i = 0; i < services.size(); ++i) {
    const ServiceRow& row = services[i];
    absl::StrAppendFormat(
        &out,
        "%s\n    {\"service\": \"%s\", \"message_bytes\": %d, \"capacity\": %d, "
        "\"services\": %d, \"idle\": %d, \"fill\": %d, \"drain\": %d, \"predicted\": "
        "{\"idle\": %d, \"fill\": %d, \"drain\": %d}, \"matches\": %s}",
        i == 0 ? "" : ",", row.service, row.message_bytes, row.capacity, row.services, row.idle,
        row.fill, row.drain, row.predicted.create, row.predicted.fill, row.predicted.drain,
        row.matches() ? "true" : "false");
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
                          const std::vector<ManyChannelsRow>& many,
                          const std::vector<ServiceRow>& services) {
  switch (format) {
    case Format::kMarkdown:
      // The many-channels table ends without a blank line.
      return memory_markdown(designs, rows) + many_markdown(many) +
             (many.empty() || services.empty() ? "" : "\n") + services_markdown(services);
    case Format::kCsv: return csv(rows, many, services);
    case Format::kJson: return json(rows, many, services);
  }
  return {};
}

}  // namespace leanchan::report
