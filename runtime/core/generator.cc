#include "runtime/core/generator.h"

namespace kiln {

Generator& default_generator() {
  // The same default seed as PyTorch's CPU generator, so runs are reproducible.
  static auto* g = new Generator(67280421310721ULL);
  return *g;
}

}  // namespace kiln
