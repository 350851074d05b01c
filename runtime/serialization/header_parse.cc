// Reading the header: the JSON walk (schema checks as it goes), then the size and layout
// checks over all tensors. Nothing here allocates a tensor.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/serialization/header.h"
#include "runtime/serialization/json_reader.h"
#include "runtime/serialization/utf8.h"

namespace kiln {
namespace serialization {
namespace {

using Kind = JsonReader::Kind;

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string offsets_str(const TensorInfo& t) {
  return detail::str_cat("[", t.begin, ", ", t.end, "]");
}

class HeaderParser {
 public:
  HeaderParser(std::string_view json, const std::string& where) : r_(json, where), where_(where) {}

  Header parse() {
    expect_kind(Kind::Object, "the header");
    r_.begin_object();
    bool has_metadata = false;
    std::string key;
    while (r_.next_member(&key)) {
      if (key == "__metadata__") {
        if (has_metadata) fail("duplicate key '__metadata__'");
        has_metadata = true;
        read_metadata();
      } else {
        header_.tensors.push_back(read_tensor(std::move(key)));
      }
    }
    r_.finish();
    return std::move(header_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error(where_ + ": " + msg); }

  void expect_kind(Kind kind, const std::string& what) {
    const Kind got = r_.peek_kind();
    if (got != kind) fail(detail::str_cat(what, " must be ", JsonReader::kind_name(kind), ", got ", JsonReader::kind_name(got)));
  }

  void read_metadata() {
    expect_kind(Kind::Object, "__metadata__");
    r_.begin_object();
    std::string key;
    while (r_.next_member(&key)) {
      const std::string what = "__metadata__ entry " + quote_name(key);
      expect_kind(Kind::String, what);
      if (!header_.metadata.emplace(key, r_.read_string()).second) fail("duplicate key " + quote_name(key) + " in __metadata__");
    }
  }

  std::vector<int64_t> read_int_list(const std::string& what, size_t max_len) {
    expect_kind(Kind::List, what);
    r_.begin_array();
    std::vector<int64_t> v;
    while (r_.next_element()) {
      if (v.size() == max_len) fail(detail::str_cat(what, " has more than ", max_len, " entries"));
      const uint64_t x = r_.read_uint64(what + " entry");
      if (x > static_cast<uint64_t>(INT64_MAX)) fail(detail::str_cat(what, " entry ", x, " does not fit int64"));
      v.push_back(static_cast<int64_t>(x));
    }
    return v;
  }

  TensorInfo read_tensor(std::string name) {
    TensorInfo t;
    t.name = std::move(name);
    const std::string who = "tensor " + quote_name(t.name);
    expect_kind(Kind::Object, who);
    r_.begin_object();
    bool has_dtype = false, has_shape = false, has_offsets = false;
    const auto once = [&](bool* seen, const char* key) {
      if (*seen) fail(detail::str_cat(who, ": duplicate key '", key, "'"));
      *seen = true;
    };
    std::string key;
    while (r_.next_member(&key)) {
      if (key == "dtype") {
        once(&has_dtype, "dtype");
        expect_kind(Kind::String, who + ": dtype");
        const std::string code = r_.read_string();
        t.dtype = find_dtype(code);
        if (!t.dtype) fail(who + ": unknown dtype " + quote_name(code));
      } else if (key == "shape") {
        once(&has_shape, "shape");
        t.shape = read_int_list(who + ": shape", kMaxDims);
      } else if (key == "data_offsets") {
        once(&has_offsets, "data_offsets");
        const size_t at = r_.offset();
        std::vector<int64_t> o = read_int_list(who + ": data_offsets", 2);
        if (o.size() != 2) {
          fail(detail::str_cat(who, ": data_offsets must be two integers [begin, end], got ", o.size(), " (at byte ", at, ")"));
        }
        t.begin = static_cast<uint64_t>(o[0]);
        t.end = static_cast<uint64_t>(o[1]);
      } else {
        fail(who + ": unexpected key " + quote_name(key) + " (a tensor has exactly dtype, shape and data_offsets)");
      }
    }
    if (!has_dtype) fail(who + ": missing key 'dtype'");
    if (!has_shape) fail(who + ": missing key 'shape'");
    if (!has_offsets) fail(who + ": missing key 'data_offsets'");
    return t;
  }

  JsonReader r_;
  const std::string& where_;
  Header header_;
};

// Bytes the tensor's shape and dtype need; Error when they overflow or split a byte.
uint64_t expected_bytes(const TensorInfo& t, const std::string& where) {
  const std::string who = where + ": tensor " + quote_name(t.name);
  int64_t numel = 1;  // in order, as kiln's own checked_numel counts
  for (int64_t s : t.shape) {
    if (__builtin_mul_overflow(numel, s, &numel)) {
      throw Error(detail::str_cat(who, ": shape ", list_str(t.shape), " has more elements than int64 can count"));
    }
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), static_cast<uint64_t>(t.dtype->bits), &bits)) {
    throw Error(detail::str_cat(who, ": shape ", list_str(t.shape), " of ", t.dtype->code, " needs more bytes than 64 bits count"));
  }
  if (bits % 8 != 0) {
    throw Error(detail::str_cat(who, ": shape ", list_str(t.shape), " of ", t.dtype->code, " does not fill whole bytes"));
  }
  return bits / 8;
}

void check_offsets(const Header& h, uint64_t buffer_size, const std::string& where) {
  for (const TensorInfo& t : h.tensors) {
    const std::string who = where + ": tensor " + quote_name(t.name);
    const uint64_t nbytes = expected_bytes(t, where);
    if (t.begin > t.end) throw Error(detail::str_cat(who, ": data_offsets ", offsets_str(t), " end before they begin"));
    if (t.end - t.begin != nbytes) {
      throw Error(detail::str_cat(who, ": data_offsets ", offsets_str(t), " do not match shape ", list_str(t.shape),
                                  " of ", t.dtype->code, " (", nbytes, " bytes)"));
    }
    if (t.end > buffer_size) {
      throw Error(detail::str_cat(who, ": data_offsets ", offsets_str(t), " run past the end of the data buffer (",
                                  buffer_size, " bytes)"));
    }
  }
}

// Sorted by begin, the tensors must tile [0, buffer_size): no hole, no overlap, no tail.
void check_layout(const Header& h, uint64_t buffer_size, const std::string& where) {
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : h.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorInfo* last = nullptr;  // the tensor that ends at `covered`
  for (const TensorInfo* t : by_offset) {
    if (t->begin < covered) {
      throw Error(detail::str_cat(where, ": tensor ", quote_name(t->name), " (data_offsets ", offsets_str(*t),
                                  ") overlaps tensor ", quote_name(last->name), " (data_offsets ", offsets_str(*last), ")"));
    }
    if (t->begin > covered) {
      throw Error(detail::str_cat(where, ": bytes [", covered, ", ", t->begin,
                                  ") of the data buffer belong to no tensor (tensors must be laid out without holes)"));
    }
    if (t->end > covered || !last) last = t;
    covered = t->end;
  }
  if (covered != buffer_size) {
    throw Error(detail::str_cat(where, ": the data buffer has ", buffer_size, " bytes but the tensors cover ", covered,
                                " (the last tensor must end at the end of the file)"));
  }
}

}  // namespace

Header parse_header(std::string_view json, uint64_t buffer_size, const std::string& where) {
  Header h = HeaderParser(json, where).parse();
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  for (size_t i = 1; i < h.tensors.size(); ++i) {
    if (h.tensors[i].name == h.tensors[i - 1].name) throw Error(where + ": duplicate tensor name " + quote_name(h.tensors[i].name));
  }
  check_offsets(h, buffer_size, where);
  check_layout(h, buffer_size, where);
  for (const TensorInfo& t : h.tensors) {
    KILN_CHECK_TYPE(t.dtype->kiln_type != ScalarType::Undefined, where, ": tensor ", quote_name(t.name), " has dtype ",
                    t.dtype->code, ", which kiln does not support yet (supported: ", supported_dtype_codes(), ")");
  }
  return h;
}

std::string quote_name(std::string_view name) {
  static const char kHex[] = "0123456789abcdef";
  const auto hex = [&](unsigned char c) { return std::string("\\x") + kHex[c >> 4] + kHex[c & 0xF]; };
  constexpr size_t kMax = 100;
  std::string s = "'";
  size_t i = 0;
  while (i < name.size() && i < kMax) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    uint32_t cp;
    const size_t n = decode_utf8(name, i, &cp);
    if (n == 0) s += hex(c);  // not UTF-8 (a C++ caller's name): show the byte
    else if (n > 1) s.append(name.data() + i, n);
    else if (c == '\n') s += "\\n";
    else if (c == '\t') s += "\\t";
    else if (c == '\\' || c == '\'') s += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F) s += hex(c);
    else s += static_cast<char>(c);
    i += n ? n : 1;
  }
  s += "'";
  if (i < name.size()) s += detail::str_cat("... (", name.size(), " bytes)");
  return s;
}

}  // namespace serialization
}  // namespace kiln
