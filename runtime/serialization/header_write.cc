// Writing the header as the reference library does: serde_json's compact form, `__metadata__`
// first, tensors in layout order with keys dtype, shape, data_offsets, then spaces up to a
// multiple of 8 bytes so the data buffer starts aligned.
#include "runtime/serialization/header.h"
#include "runtime/serialization/json_writer.h"

namespace kiln {
namespace serialization {

std::string write_header(const std::vector<TensorInfo>& tensors, const std::map<std::string, std::string>& metadata) {
  std::string h = "{";
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
      if (it != metadata.begin()) h += ',';
      append_json_string(h, it->first);
      h += ':';
      append_json_string(h, it->second);
    }
    h += '}';
  }
  for (const TensorInfo& t : tensors) {
    if (h.size() > 1) h += ',';
    append_json_string(h, t.name);
    h += ":{\"dtype\":";
    append_json_string(h, t.dtype->code);
    h += ",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) h += (i ? "," : "") + std::to_string(t.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(t.begin) + "," + std::to_string(t.end) + "]}";
  }
  h += '}';
  h.append((8 - h.size() % 8) % 8, ' ');
  return h;
}

}  // namespace serialization
}  // namespace kiln
