// The instruction sets kiln's vector kernels are compiled for, chosen among at run time by
// Highway's dynamic dispatch (runtime/kernels/cpu/vector_formula-inl.h). Include this before
// any Highway header: it sets Highway's target list for the whole translation unit.
//
// Highway would compile its portable baseline (SCALAR with GCC 12, EMU128 with clang: kiln builds
// for plain x86-64), SSSE3, SSE4, AVX2 and AVX3 (AVX-512 F/VL/DQ/BW). kiln drops SSSE3 (CPUs from
// before 2008 that lack SSE4.1 take the baseline) to keep the build small: each target compiles
// every vector kernel once more. A machine with none of SSE4, AVX2, AVX3 lands on the baseline,
// where the generated kernels run their scalar functors rather than Highway's emulated vectors.
#pragma once

#ifdef HWY_DISABLED_TARGETS
#error "runtime/kernels/cpu/vector_targets.h must come before any Highway header"
#endif
#define HWY_DISABLED_TARGETS HWY_SSSE3
