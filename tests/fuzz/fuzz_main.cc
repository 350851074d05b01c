// libFuzzer entry point (tools/fuzz.sh builds it with clang-14, ASAN and UBSAN).
#include <cstddef>
#include <cstdint>

#include "runtime/core/allocator.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Hostile sizes must fail as kiln errors, not exhaust the machine.
  static const bool limited = (kiln::set_cpu_allocation_limit(size_t(1) << 28), true);
  (void)limited;
  kiln::fuzz::run_one_input(data, size);
  return 0;
}
