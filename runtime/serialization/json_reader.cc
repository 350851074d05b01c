#include "runtime/serialization/json_reader.h"

#include "runtime/core/error.h"
#include "runtime/serialization/utf8.h"

namespace kiln {
namespace serialization {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

JsonReader::JsonReader(std::string_view text, std::string where) : text_(text), where_(std::move(where)) {}

void JsonReader::syntax_error(const std::string& msg) const {
  throw Error(detail::str_cat(where_, ": invalid JSON in header at byte ", pos_, ": ", msg));
}

void JsonReader::skip_whitespace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

size_t JsonReader::offset() {
  skip_whitespace();
  return pos_;
}

bool JsonReader::starts_with(std::string_view word) const { return text_.substr(pos_, word.size()) == word; }

void JsonReader::expect(char c, const char* context) {
  skip_whitespace();
  if (pos_ >= text_.size()) syntax_error(detail::str_cat("unexpected end of header, expected '", c, "' ", context));
  if (text_[pos_] != c) syntax_error(detail::str_cat("expected '", c, "' ", context));
  ++pos_;
}

const char* JsonReader::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Object: return "an object";
    case Kind::List: return "a list";
    case Kind::String: return "a string";
    case Kind::Number: return "a number";
    case Kind::Boolean: return "a boolean";
    case Kind::Null: return "null";
  }
  return "?";
}

JsonReader::Kind JsonReader::peek_kind() {
  skip_whitespace();
  if (pos_ >= text_.size()) syntax_error("unexpected end of header, expected a value");
  char c = text_[pos_];
  if (c == '{') return Kind::Object;
  if (c == '[') return Kind::List;
  if (c == '"') return Kind::String;
  if (c == '-' || is_digit(c)) return Kind::Number;
  if (starts_with("true") || starts_with("false")) return Kind::Boolean;
  if (starts_with("null")) return Kind::Null;
  if (c >= 0x20 && c < 0x7F) syntax_error(detail::str_cat("unexpected character '", c, "'"));
  syntax_error(detail::str_cat("unexpected byte 0x", "0123456789abcdef"[(c >> 4) & 0xF], "0123456789abcdef"[c & 0xF]));
}

void JsonReader::push_container(char close) {
  if (open_.size() >= kMaxDepth) syntax_error(detail::str_cat("nested deeper than ", kMaxDepth, " levels"));
  open_.push_back({close, false});
}

void JsonReader::begin_object() {
  expect('{', "to open an object");
  push_container('}');
}

void JsonReader::begin_array() {
  expect('[', "to open a list");
  push_container(']');
}

bool JsonReader::next_in_container(char close) {
  if (open_.empty() || open_.back().close != close) throw Error("JsonReader: misuse (no such container open)");
  skip_whitespace();
  if (pos_ >= text_.size()) syntax_error(detail::str_cat("unexpected end of header, expected '", close, "'"));
  if (text_[pos_] == close) {
    ++pos_;
    open_.pop_back();
    return false;
  }
  if (open_.back().has_element) {
    if (text_[pos_] != ',') syntax_error(detail::str_cat("expected ',' or '", close, "'"));
    ++pos_;
    skip_whitespace();
    if (pos_ < text_.size() && text_[pos_] == close) syntax_error("trailing comma");
  }
  open_.back().has_element = true;
  return true;
}

bool JsonReader::next_member(std::string* key) {
  if (!next_in_container('}')) return false;
  skip_whitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') syntax_error("expected a string key in double quotes");
  *key = read_string();
  expect(':', "after a key");
  return true;
}

bool JsonReader::next_element() { return next_in_container(']'); }

uint32_t JsonReader::read_hex4() {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k, ++pos_) {
    if (pos_ >= text_.size()) syntax_error("unexpected end of header in a \\u escape");
    char c = text_[pos_];
    int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) syntax_error("a \\u escape needs four hex digits");
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

std::string JsonReader::read_string() {
  skip_whitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') syntax_error("expected a string");
  ++pos_;
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) syntax_error("unterminated string");
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (c < 0x20) syntax_error("control character in a string (it must be escaped)");
    if (c >= 0x80) {
      uint32_t cp;
      size_t n = decode_utf8(text_, pos_, &cp);
      if (n == 0) syntax_error("invalid UTF-8");
      out.append(text_.data() + pos_, n);
      pos_ += n;
      continue;
    }
    ++pos_;
    if (c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    if (pos_ >= text_.size()) syntax_error("unterminated escape");
    const char e = text_[pos_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = read_hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) syntax_error("lone low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // UTF-16 pair: a low surrogate must follow
          if (!starts_with("\\u")) syntax_error("high surrogate not followed by a low surrogate");
          pos_ += 2;
          uint32_t low = read_hex4();
          if (low < 0xDC00 || low > 0xDFFF) syntax_error("high surrogate not followed by a low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default:
        --pos_;
        syntax_error(detail::str_cat("invalid escape '\\", e, "'"));
    }
  }
}

std::string_view JsonReader::scan_number() {
  const size_t start = pos_;
  const auto digits = [&](const char* what) {
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) syntax_error(detail::str_cat("expected a digit ", what));
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
  };
  if (text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
    if (pos_ < text_.size() && is_digit(text_[pos_])) syntax_error("leading zeros are not allowed in numbers");
  } else {
    digits("in a number");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    digits("after the decimal point");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    digits("in the exponent");
  }
  return text_.substr(start, pos_ - start);
}

uint64_t JsonReader::read_uint64(const std::string& what) {
  const Kind kind = peek_kind();
  if (kind != Kind::Number) {
    throw Error(detail::str_cat(where_, ": ", what, " must be a non-negative integer, got ", kind_name(kind)));
  }
  std::string_view num = scan_number();
  for (char c : num) {
    if (!is_digit(c)) {
      throw Error(detail::str_cat(where_, ": ", what, " must be a non-negative integer, got ", std::string(num)));
    }
  }
  uint64_t v = 0;
  for (char c : num) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, static_cast<uint64_t>(c - '0'), &v)) {
      throw Error(detail::str_cat(where_, ": ", what, " ", std::string(num), " is too large"));
    }
  }
  return v;
}

void JsonReader::finish() {
  skip_whitespace();
  if (!open_.empty()) throw Error("JsonReader: misuse (finish with a container open)");
  if (pos_ != text_.size()) syntax_error("unexpected data after the top-level object");
}

}  // namespace serialization
}  // namespace kiln
