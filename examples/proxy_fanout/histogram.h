// SPDX-License-Identifier: MIT
// A fixed-size log-linear latency histogram: the proxy records every
// event's latency into it without allocating and without growing, so that
// the resident memory the proxy reports is the proxy's, not the samples'.
//
// Buckets: values 0..63 ns exactly; above, each power of two [2^e, 2^(e+1))
// is cut into 64 equal sub-buckets, so a value is known to within 1/64
// (1.6 %) of itself. Values at or above 2^kMaxExponent ns (about 2.3 hours)
// land in the last bucket. 2,496 counters: 19.5 KB, allocated and touched
// when the histogram is made (before any memory is measured).
//
// Thread-safety: one writer at a time (each worker owns one); merge() and
// percentile() after the writers are joined.
#ifndef LEANCHAN_EXAMPLES_PROXY_FANOUT_HISTOGRAM_H_
#define LEANCHAN_EXAMPLES_PROXY_FANOUT_HISTOGRAM_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace proxy {

class Histogram {
 public:
  static constexpr int kSubBits = 6;  // 64 sub-buckets per power of two
  static constexpr int kMaxExponent = 43;
  static constexpr std::size_t kBuckets = std::size_t{kMaxExponent - kSubBits + 1}
                                          << kSubBits;  // 2,432, plus 64 exact ones

  Histogram() : counts_(kBuckets + (std::size_t{1} << kSubBits), 0) {}

  void add(std::int64_t value_ns) {
    ++counts_[index_of(value_ns < 0 ? 0 : static_cast<std::uint64_t>(value_ns))];
    ++total_;
  }
  void merge(const Histogram& other) {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
  }
  std::uint64_t count() const { return total_; }

  // The value below which a fraction `p` (0..1) of the samples lie: the
  // midpoint of the bucket holding the sample of rank floor(p * (n - 1)),
  // as a sorted array would be indexed. 0 when empty.
  double percentile(double p) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(p * static_cast<double>(total_ - 1));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen > rank) return midpoint_of(i);
    }
    return midpoint_of(counts_.size() - 1);
  }

  static std::size_t index_of(std::uint64_t v) {
    constexpr std::uint64_t kExact = std::uint64_t{1} << kSubBits;
    if (v < kExact) return static_cast<std::size_t>(v);
    int exponent = std::bit_width(v) - 1;  // >= kSubBits
    if (exponent >= kMaxExponent) {
      exponent = kMaxExponent;
      v = (std::uint64_t{2} << kMaxExponent) - 1;  // the last bucket
    }
    const std::uint64_t sub = (v >> (exponent - kSubBits)) & (kExact - 1);
    return static_cast<std::size_t>(
        (static_cast<std::uint64_t>(exponent - kSubBits + 1) << kSubBits) + sub);
  }
  // [lower, upper) of bucket `i`, and its midpoint.
  static double midpoint_of(std::size_t i) {
    constexpr std::size_t kExact = std::size_t{1} << kSubBits;
    if (i < kExact) return static_cast<double>(i);
    const int exponent = static_cast<int>(i >> kSubBits) - 1 + kSubBits;
    const std::uint64_t sub = i & (kExact - 1);
    const std::uint64_t width = std::uint64_t{1} << (exponent - kSubBits);
    const std::uint64_t lower = (kExact + sub) * width;
    return static_cast<double>(lower) + static_cast<double>(width) / 2.0;
  }

 private:
  std::vector<std::uint64_t> counts_;  // zero-filled: every page touched at construction
  std::uint64_t total_ = 0;
};

}  // namespace proxy

#endif  // LEANCHAN_EXAMPLES_PROXY_FANOUT_HISTOGRAM_H_
