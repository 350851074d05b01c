// Writing JSON strings exactly as serde_json (the reference safetensors writer) does, so a
// header kiln writes is byte-for-byte the one the reference library writes.
#pragma once

#include <string>
#include <string_view>

namespace kiln {
namespace serialization {

// Appends `s` (valid UTF-8) as a quoted JSON string: '"' and '\' escaped, \b \f \n \r \t
// short forms, other control characters as \u00XX (lowercase hex), everything else as is.
void append_json_string(std::string& out, std::string_view s);

}  // namespace serialization
}  // namespace kiln
