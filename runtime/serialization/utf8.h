// Strict UTF-8 (RFC 3629): what the safetensors header must be, and what Python's
// decoder accepts, so every name kiln reads or writes is a valid Python str.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {
namespace serialization {

// Length (1-4) of the UTF-8 sequence starting at s[i], storing its code point in *cp;
// 0 when it is invalid: a stray continuation byte, a truncated sequence, an overlong
// form, an encoded surrogate (U+D800..U+DFFF) or a code point past U+10FFFF.
size_t decode_utf8(std::string_view s, size_t i, uint32_t* cp);

bool is_valid_utf8(std::string_view s);

// Appends code point `cp` (at most U+10FFFF, not a surrogate) encoded as UTF-8.
void append_utf8(std::string& out, uint32_t cp);

}  // namespace serialization
}  // namespace kiln
