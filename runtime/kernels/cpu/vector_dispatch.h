// Which instruction set the vectorized CPU kernels run (generated/cpu/<op>.cc with a vector loop,
// runtime/kernels/cpu/vector_formula-inl.h): Highway's dynamic dispatch picks, on the first call,
// the best of the targets kiln compiles (runtime/kernels/cpu/vector_targets.h) this CPU supports.
#pragma once

#include <string>
#include <vector>

namespace kiln {
namespace cpu {

// Highway's name of the target the vector kernels run on: "AVX3" (AVX-512), "AVX2", "SSE4", or the
// baseline, "SCALAR" (GCC) or "EMU128" (clang), where the generated kernels run their scalar functors.
std::string vector_target();

// Every compiled target this CPU can run, best first (the baseline last).
std::vector<std::string> vector_targets_available();

// For tests and benchmarks: runs the vector kernels on `target` (one of vector_targets_available())
// from now on, in every thread; "" goes back to the best. Returns false for any other name.
bool use_vector_target(const std::string& target);

// Whether torch's CPU kernels fuse `a * b + c` on this CPU (pm::torch_kernels_use_fma): kiln's
// Python add/sub with alpha and addcmul take the fused _fma only then, as torch rounds.
bool torch_fuses_multiply_add();

}  // namespace cpu
}  // namespace kiln
