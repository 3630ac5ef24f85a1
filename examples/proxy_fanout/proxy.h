// SPDX-License-Identifier: MIT
// The proxy scenario: N upstream services, one channel of health events
// each, a health checker that fans events out at a steady rate plus zone
// bursts, services added and removed while it runs, and a small pool of
// workers serving every channel through one ReadySet each.
//
// Ownership: the checker thread owns the registry (service key -> sender).
// Each worker owns its services (receiver + ReadyEntry). Removing a service
// is dropping its sender: the worker drains what is left, sees the end and
// destroys the service itself, so no event is lost to a removal.
#ifndef LEANCHAN_EXAMPLES_PROXY_FANOUT_PROXY_H_
#define LEANCHAN_EXAMPLES_PROXY_FANOUT_PROXY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "leanchan/channel_registry.h"
#include "leanchan/memory_budget.h"

namespace proxy {

struct Options {
  std::size_t services = 10'000;
  std::size_t capacity = 16;
  int workers = 2;
  int zones = 10;
  int rate = 20'000;             // steady events per second
  double seconds = 2.0;          // how long the checker runs
  int burst_interval_ms = 500;   // a zone flaps this often
  int churn_per_second = 100;    // services removed and added per second
  double rss_every_seconds = 0;  // soak mode: sample RSS this often (0: off)
  std::uint32_t seed = 1;
  // leanchan only: every service channel's memory comes from one
  // leanchan::MemoryBudget of this many bytes (0: no budget).
  std::size_t budget_bytes = 0;
  // leanchan only: every service channel is listed in a
  // leanchan::ChannelRegistry (tagged with its service key), and the checker
  // walks it right after each burst it sends, for the this many holding the
  // most memory (0: no registry).
  std::size_t top_services = 0;
};

struct Report {
  std::string design;
  std::size_t services = 0;
  double channel_bytes_idle = 0;  // one idle channel, heap (requested)
  double heap_idle = 0;           // per service: the whole proxy's heap
  double rss_idle = 0;            // per service: resident memory
  double heap_peak = 0;           // per service, highest during the run
  double heap_drained = 0;        // per service, after every event is taken
  double rss_drained = 0;
  double events_per_second = 0;  // received / run time
  std::uint64_t sent = 0;        // accepted by try_send
  std::uint64_t refused = 0;     // try_send found the channel full
  // Under a budget (Options::budget_bytes): events try_send refused because
  // their block would pass the budget (kNoMemory, counted, never dropped
  // silently), services whose channel could not be created, and the
  // budget's figures at the end of the run (before shutdown).
  bool budgeted = false;
  std::uint64_t refused_budget = 0;
  std::uint64_t services_refused_budget = 0;
  std::size_t budget_limit = 0;
  leanchan::MemoryBudgetFigures budget{};
  // Options::top_services: the last burst's registry walk (the services
  // listed, their bytes, the top holders by service key), the walks made
  // and the longest one's time.
  bool listed = false;
  leanchan::ChannelRegistryFigures group{};
  int walks = 0;
  double walk_ms = 0;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;  // sent but never received, or a gap
  std::uint64_t duplicated = 0;
  std::uint64_t services_added = 0;
  std::uint64_t services_removed = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;  // from a log-linear histogram (1.6 %)
  // CPU time (user + system, getrusage per thread) per event: the checker
  // thread's over the run, per event sent; each worker's over its life,
  // per event received (all workers together, and one figure per worker).
  double checker_cpu_ns_per_event = 0;
  double workers_cpu_ns_per_event = 0;
  std::vector<double> worker_cpu_ns_per_event;
  // Soak mode: (seconds since the run started, RSS per service above the
  // idle baseline's start) every Options::rss_every_seconds.
  std::vector<std::pair<double, double>> rss_series;
  bool ok() const { return lost == 0 && duplicated == 0 && received == sent; }
};

// Runs the scenario on leanchan or on the Tokio-style baseline. Bounded:
// returns after `seconds` plus the drain and shutdown.
Report run_leanchan(const Options& options);
Report run_tokio_style(const Options& options);

}  // namespace proxy

#endif  // LEANCHAN_EXAMPLES_PROXY_FANOUT_PROXY_H_
