// SPDX-License-Identifier: MIT
// The services table: what one service costs, the channel together with what
// a program keeps to serve it, in requested heap bytes. A service is one
// channel made by channel<T>(capacity) and the object the program holds for
// it, allocated with operator new so that the counting hook sees it too:
//   - "ReadySet": a ReadyEntry, the channel's Sender and its Receiver (an
//     epoll/poll loop serving many channels through one leanchan::ReadySet);
//   - "leanchan::asio" (built when standalone Asio or Boost.Asio is found):
//     the Sender and a leanchan::asio::AsyncReceiver with one receive
//     pending, whose handler (one pointer) receives again.
// What every service shares (the ReadySet and its eventfd, the io_context
// and its services) is made before counting starts.
#ifndef LEANCHAN_PROFILER_REPORT_SERVICES_H_
#define LEANCHAN_PROFILER_REPORT_SERVICES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "memtable.h"

namespace leanchan::report {

// How many services each row makes; its figures are per service.
inline constexpr std::size_t kServicesPerRow = 10;

struct ServiceRow {
  std::string service;  // "ReadySet" or "leanchan::asio"
  std::size_t message_bytes = 0;
  std::size_t capacity = 0;
  std::size_t services = 0;  // made together; the figures below are per service
  // Requested heap bytes per service, relative to just before the services
  // were made: idle = every service waiting for a message; fill = after
  // `capacity` sends into every channel, not served yet; drain = after the
  // server took every message and waits again.
  std::int64_t idle = 0;
  std::int64_t fill = 0;
  std::int64_t drain = 0;
  // Whether every total divided evenly by `services` (nothing shared was
  // counted).
  bool exact = true;
  Prediction predicted;  // create = idle
  bool matches() const {
    return exact && idle == predicted.create && fill == predicted.fill && drain == predicted.drain;
  }
};

// The row of `services` services measured together: the per-service
// figures from their totals (row.exact says whether each divided evenly),
// beside the per-service prediction.
inline ServiceRow per_service_row(std::string name, std::size_t message_bytes, std::size_t capacity,
                                  std::size_t services, std::int64_t idle_total,
                                  std::int64_t fill_total, std::int64_t drain_total,
                                  Prediction predicted) {
  const auto n = static_cast<std::int64_t>(services);
  ServiceRow row;
  row.service = std::move(name);
  row.message_bytes = message_bytes;
  row.capacity = capacity;
  row.services = services;
  row.idle = idle_total / n;
  row.fill = fill_total / n;
  row.drain = drain_total / n;
  row.exact = idle_total % n == 0 && fill_total % n == 0 && drain_total % n == 0;
  row.predicted = predicted;
  return row;
}

struct Service {
  std::string name;      // as in ServiceRow::service
  std::string holds;     // what the program holds per service, in words
  std::string formulas;  // idle / fill / drain with this build's sizes, for the legend
  // Measures kServicesPerRow services of `message_bytes`-byte messages (a
  // supported size) and `capacity`. Throws std::system_error if the
  // ReadySet's eventfd cannot be made.
  std::function<ServiceRow(std::size_t message_bytes, std::size_t capacity)> measure;
};

// Every service this build measures, in report order: the ReadySet, then
// leanchan::asio when built with Asio.
const std::vector<Service>& all_services();

// The ReadySet row (services.cc) and, in a build with Asio, the
// leanchan::asio row (services_asio.cc).
Service ready_set_service();
#if LEANCHAN_REPORT_HAVE_ASIO
Service asio_service();
#endif

}  // namespace leanchan::report

#endif  // LEANCHAN_PROFILER_REPORT_SERVICES_H_
