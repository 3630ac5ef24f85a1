// leanchan/internal/spin.h: the pause instruction for bounded watching loops.
#ifndef LEANCHAN_INTERNAL_SPIN_H_
#define LEANCHAN_INTERNAL_SPIN_H_

namespace leanchan::internal {

// Tells the processor this is a spin-wait (x86 PAUSE); a no-op elsewhere.
// Every loop that calls it is bounded and ends in a futex sleep.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace leanchan::internal

#endif  // LEANCHAN_INTERNAL_SPIN_H_
