// Host memory that is not tensor storage but grows with a hostile argument (the list of views
// split/chunk/unbind return): checked against the same limit as tensor allocations, so the
// fuzzer's limit (set_cpu_allocation_limit) turns it into a kiln error instead of an OOM kill.
#pragma once

#include <cstddef>

namespace kiln {

// Raises kiln::Error ("not enough memory") when `nbytes` exceeds the CPU allocation limit.
void check_cpu_allocation(size_t nbytes, const char* what);

}  // namespace kiln
