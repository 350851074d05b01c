// Host memory for tensors.
//
// Large blocks are cached by size and handed out again instead of going back
// to the OS: a fresh 64 MB result otherwise page-faults on every page, which
// made PyTorch's `a + b` on 16M floats 4-5x slower than into an existing buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

constexpr size_t kTensorAlignment = 64;  // a cache line; enough for AVX-512 loads

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for at least `nbytes`; `*capacity` receives the usable size,
  // which must be passed back to deallocate().
  virtual void* allocate(size_t nbytes, size_t* capacity) = 0;
  virtual void deallocate(void* ptr, size_t capacity) = 0;
};

struct CpuAllocatorStats {
  int64_t cache_hits = 0;    // large allocations served from the cache
  int64_t cache_misses = 0;  // large allocations that went to the OS
  int64_t cached_bytes = 0;  // bytes sitting in the cache now
};

// The process-wide CPU allocator.
Allocator* cpu_allocator();
CpuAllocatorStats cpu_allocator_stats();
// Returns every cached block to the OS.
void cpu_allocator_empty_cache();
// Allocations above `bytes` raise kiln::Error ("not enough memory") instead of asking the OS;
// 0 (the default) means no limit. The fuzzer sets one so hostile sizes fail cleanly.
void set_cpu_allocation_limit(size_t bytes);

}  // namespace kiln
