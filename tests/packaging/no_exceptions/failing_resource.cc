// SPDX-License-Identifier: MIT
// A memory resource that always fails, as std::pmr resources do: by
// throwing. In its own translation unit, built with exceptions, for the
// -fno-exceptions test beside it.
#include <memory_resource>
#include <new>

namespace {

class Failing final : public std::pmr::memory_resource {
  void* do_allocate(std::size_t, std::size_t) override { throw std::bad_alloc(); }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace

std::pmr::memory_resource* failing_resource() {
  static Failing resource;
  return &resource;
}
