// Tensors on disk in the safetensors format (https://github.com/huggingface/safetensors):
//
//   8 bytes   N, the header length (unsigned, little-endian)
//   N bytes   JSON header: {"__metadata__": {"k": "v"},
//                           "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}
//   the rest  the data buffer: each tensor's bytes, C order, little-endian, at data_offsets
//
//   kiln::save_file({{"w", w}, {"b", b}}, "model.safetensors", {{"format", "pt"}});
//   kiln::SafetensorsFile f = kiln::load_file("model.safetensors");
//   const kiln::TensorBase* w = f.find("w");
//
// Writing gives the bytes the reference library writes. Loading checks the whole header
// against the file before it allocates a tensor, and a damaged or hostile file gets a
// kiln::Error naming the file and the problem. See docs/ARCHITECTURE.md.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/tensor_base.h"

namespace kiln {

using NamedTensors = std::vector<std::pair<std::string, TensorBase>>;
using SafetensorsMetadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  NamedTensors tensors;  // sorted by name
  SafetensorsMetadata metadata;
  // The tensor called `name`, or nullptr.
  const TensorBase* find(const std::string& name) const;
};

// Writes `tensors` (unique, UTF-8 names other than "__metadata__"; CPU tensors of any layout,
// stored as contiguous bytes) and `metadata` (empty: no "__metadata__" entry) to `path`.
// Bad input is a ValueError/TypeError raised before the file is touched; an OS failure is an
// OSError. `context` names the caller in messages.
void save_file(const NamedTensors& tensors, const std::string& path, const SafetensorsMetadata& metadata = {},
               const std::string& context = "save_file");
// The same bytes, in memory.
std::string save_bytes(const NamedTensors& tensors, const SafetensorsMetadata& metadata = {},
                       const std::string& context = "save_bytes");

// Reads a whole file. Missing or unreadable files are an OSError (errno kept); anything wrong
// with the contents an Error (a dtype kiln cannot hold: TypeError).
SafetensorsFile load_file(const std::string& path, const std::string& context = "load_file");
// The same from memory; `name` stands for the file name in messages.
SafetensorsFile load_bytes(std::string_view data, const std::string& name = "<bytes>",
                           const std::string& context = "load_bytes");

}  // namespace kiln
