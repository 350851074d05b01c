// Regression test for the fuzzer, built with the normal toolchain: replays every input of
// the committed corpus (tests/fuzz/corpus/, including each past finding) and a fixed set of
// pseudo-random inputs through the same decoder and op table. Any exception other than a
// kiln::Error, or a crash, fails it.
#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/allocator.h"
#include "tests/fuzz/fuzz_input.h"

int main(int argc, char** argv) {
  kiln::set_cpu_allocation_limit(size_t(1) << 28);
  const std::string dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";
  int files = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(dir + "/" + e->d_name, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      kiln::fuzz::run_one_input(bytes.data(), bytes.size());
      ++files;
    }
    closedir(d);
  }
  std::mt19937 rng(1234);
  const int kRandomInputs = argc > 2 ? std::atoi(argv[2]) : 3000;
  for (int i = 0; i < kRandomInputs; ++i) {
    std::vector<uint8_t> bytes(rng() % 512);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    kiln::fuzz::run_one_input(bytes.data(), bytes.size());
  }
  std::printf("replayed %d corpus inputs and %d random inputs over %zu ops\n", files, kRandomInputs,
              kiln::fuzz::kNumFuzzOps);
  if (files == 0) {
    std::printf("no corpus found at %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
