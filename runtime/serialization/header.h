// The JSON header of a safetensors file, both ways: parsing (with every check the loader
// makes before it allocates a tensor) and writing (byte-for-byte what the reference writes).
//
//   {"__metadata__": {"k": "v"}, "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/serialization/dtypes.h"

namespace kiln {
namespace serialization {

// Header lengths above this are rejected, as the reference library does (100 MB).
constexpr uint64_t kMaxHeaderBytes = 100000000;
// More dims than this are rejected: it bounds what a hostile header can make the loader keep,
// and NumPy cannot hold more either.
constexpr size_t kMaxDims = 64;

struct TensorInfo {
  std::string name;
  const DtypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data buffer
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorInfo> tensors;  // sorted by name
  std::map<std::string, std::string> metadata;
};

// Parses `json` and checks it against a data buffer of `buffer_size` bytes: strict JSON, the
// schema, known dtypes, shapes, offsets inside the buffer, and a buffer tiled exactly by the
// tensors. Errors are kiln::Error (RuntimeError) starting with `where`, except a known dtype
// kiln cannot hold, which is a kiln::TypeError (checked last, so a damaged file says so).
Header parse_header(std::string_view json, uint64_t buffer_size, const std::string& where);

// The header for `tensors`, which must already be in layout order with their offsets set:
// compact JSON, `__metadata__` first (when not empty), padded with spaces to a multiple of 8.
std::string write_header(const std::vector<TensorInfo>& tensors, const std::map<std::string, std::string>& metadata);

// 'name' for messages: control characters escaped, names over 100 bytes cut short.
std::string quote_name(std::string_view name);

}  // namespace serialization
}  // namespace kiln
