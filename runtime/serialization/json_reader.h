// A strict, pull-style JSON reader (RFC 8259, nothing more): the caller walks the document
// in the shape it expects, so nothing is built that the caller does not keep, and a hostile
// header cannot make kiln allocate more than the values it asked for.
//
// Strict means: no trailing commas, comments, NaN/Infinity, leading zeros, single quotes or
// unescaped control characters; escapes and \u surrogate pairs must be valid; the text must
// be valid UTF-8; nesting is bounded; only whitespace may follow the top-level value.
// Every error is a kiln::Error that starts with `where` and gives the byte offset.
//
//   JsonReader r(text, "load_file: f.safetensors");
//   r.begin_object();
//   std::string key;
//   while (r.next_member(&key)) { ... read exactly one value ... }
//   r.finish();
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {
namespace serialization {

class JsonReader {
 public:
  static constexpr size_t kMaxDepth = 64;

  JsonReader(std::string_view text, std::string where);

  enum class Kind { Object, List, String, Number, Boolean, Null };
  // "an object", "a list", ... for messages such as "shape must be a list, got a string".
  static const char* kind_name(Kind kind);

  // What the next value is, without consuming it; an invalid token is a syntax error here.
  Kind peek_kind();

  void begin_object();
  // Reads the next key of the innermost object and its ':'; false (and the object is closed)
  // at '}'. The caller then reads exactly one value.
  bool next_member(std::string* key);

  void begin_array();
  // Whether another element follows in the innermost list; false (and the list is closed) at ']'.
  bool next_element();

  std::string read_string();
  // A non-negative integer literal (no sign, fraction or exponent) that fits uint64. `what`
  // names the value in the error message when the next value is something else.
  uint64_t read_uint64(const std::string& what);

  // Only whitespace may remain.
  void finish();

  // Byte offset of the next unread character (after whitespace), for messages.
  size_t offset();

 private:
  [[noreturn]] void syntax_error(const std::string& msg) const;
  void skip_whitespace();
  void expect(char c, const char* context);
  bool starts_with(std::string_view word) const;
  // Scans a number token by the JSON grammar; returns its text.
  std::string_view scan_number();
  uint32_t read_hex4();
  void push_container(char close);
  // Handles the ',' between elements and the closing bracket; false when the container closed.
  bool next_in_container(char close);

  std::string_view text_;
  size_t pos_ = 0;
  std::string where_;
  struct Open {
    char close;        // '}' or ']'
    bool has_element;  // so a ',' must come before the next one
  };
  std::vector<Open> open_;
};

}  // namespace serialization
}  // namespace kiln
