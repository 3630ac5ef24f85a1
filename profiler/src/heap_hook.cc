// SPDX-License-Identifier: MIT
// The counting hook: replaces every form of global operator new and delete.
// Linked by choice (leanchan::profiler_hook); see heap_counters.h.
//
// Each allocation is made `offset` bytes larger than requested; the request's
// size and the offset sit in the 16 bytes just below the pointer returned, so
// every delete, sized or not, subtracts exactly what was added.
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "leanchan/profiler/heap_counters.h"

#if defined(LEANCHAN_PROFILER_MIMALLOC)
#include <mimalloc.h>
#endif

// Referenced by the linker option of leanchan::profiler_hook
// (--undefined=leanchan_profiler_hook_anchor), so this object is always
// linked in, even when a sanitizer runtime listed earlier on the link line
// already defines operator new.
extern "C" const char leanchan_profiler_hook_anchor = 1;

namespace {

using leanchan::profiler::internal::record_allocation;
using leanchan::profiler::internal::record_free;

struct Prefix {
  std::size_t requested;
  std::size_t offset;  // from the allocator's pointer to the user's
};
static_assert(sizeof(Prefix) == 16, "the prefix must keep 16-byte alignment");

#if defined(LEANCHAN_PROFILER_MIMALLOC)
constexpr const char* kBackend = "mimalloc";
void* backend_alloc(std::size_t bytes, std::size_t alignment) noexcept {
  return mi_malloc_aligned(bytes, alignment);
}
void backend_free(void* base) noexcept {
  mi_free(base);
}
std::size_t backend_usable(void* base) noexcept {
  return mi_usable_size(base);
}
void backend_release_free_memory() {
  mi_collect(true);
}
#else
constexpr const char* kBackend = "glibc malloc";
void* backend_alloc(std::size_t bytes, std::size_t alignment) noexcept {
  if (alignment <= alignof(std::max_align_t)) return std::malloc(bytes);
  void* base = nullptr;
  return ::posix_memalign(&base, alignment, bytes) == 0 ? base : nullptr;
}
void backend_free(void* base) noexcept {
  std::free(base);
}
std::size_t backend_usable(void* base) noexcept {
  return ::malloc_usable_size(base);
}
void backend_release_free_memory() {
  ::malloc_trim(0);
}
#endif

struct Registration {
  Registration() noexcept {
    leanchan::profiler::internal::register_hook(kBackend, &backend_release_free_memory);
  }
} const g_registration;

void* allocate(std::size_t requested, std::size_t alignment) noexcept {
  const std::size_t offset = alignment > sizeof(Prefix) ? alignment : sizeof(Prefix);
  if (requested > static_cast<std::size_t>(-1) - offset) return nullptr;
  void* base = backend_alloc(requested + offset, alignment < 16 ? 16 : alignment);
  if (base == nullptr) return nullptr;
  auto* user = static_cast<unsigned char*>(base) + offset;
  auto* prefix = reinterpret_cast<Prefix*>(user - sizeof(Prefix));
  prefix->requested = requested;
  prefix->offset = offset;
  record_allocation(requested, backend_usable(base) - offset);
  return user;
}

void deallocate(void* pointer) noexcept {
  if (pointer == nullptr) return;
  auto* user = static_cast<unsigned char*>(pointer);
  const Prefix prefix = *reinterpret_cast<Prefix*>(user - sizeof(Prefix));
  void* base = user - prefix.offset;
  record_free(prefix.requested, backend_usable(base) - prefix.offset);
  backend_free(base);
}

// The throwing forms: retry through the new-handler, as the standard asks.
void* allocate_or_throw(std::size_t requested, std::size_t alignment) {
  for (;;) {
    if (void* pointer = allocate(requested, alignment)) return pointer;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate_nothrow(std::size_t requested, std::size_t alignment) noexcept {
  try {
    return allocate_or_throw(requested, alignment);
  } catch (...) {
    return nullptr;
  }
}

constexpr std::size_t kDefault = __STDCPP_DEFAULT_NEW_ALIGNMENT__;

}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n, kDefault);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n, kDefault);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n, kDefault);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n, kDefault);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate_nothrow(n, static_cast<std::size_t>(a));
}

void operator delete(void* p) noexcept {
  deallocate(p);
}
void operator delete[](void* p) noexcept {
  deallocate(p);
}
void operator delete(void* p, std::size_t) noexcept {
  deallocate(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  deallocate(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  deallocate(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  deallocate(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  deallocate(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  deallocate(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  deallocate(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  deallocate(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  deallocate(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  deallocate(p);
}
