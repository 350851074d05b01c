// safetensors files (runtime/serialization/): round trips, the exact bytes of small files
// worked out by hand from the format's description, and malformed files, each of which must
// give a kiln::Error naming the problem (never a crash).
#include <errno.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/os_error.h"
#include "runtime/serialization/json_reader.h"
#include "runtime/serialization/safetensors.h"
#include "tests/cpp/test_helpers.h"

using kiln::ScalarType;
using kiln::api::Tensor;
using kiln::TensorBase;

namespace {

template <typename T>
Tensor make(std::vector<T> v, std::vector<int64_t> shape) {
  Tensor t = kiln::api::empty(shape, kiln::CppTypeToScalarType<T>::value);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<T>()[i] = v[i];
  return t;
}

// The bytes of a contiguous copy, to compare tensors of any dtype exactly.
std::string bytes_of(const TensorBase& t) {
  Tensor c = Tensor(t).contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel() * c.element_size()));
}

// 8-byte little-endian length, the header as given, then the data.
std::string file_of(const std::string& header, const std::string& data = "") {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return s + header + data;
}

std::string load_error(const std::string& bytes) {
  try {
    kiln::load_bytes(bytes, "f.safetensors");
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "(loaded)";
}

// "1,1,...,1": n ones, for shapes.
std::string ones(int n) {
  std::string s = "1";
  for (int i = 1; i < n; ++i) s += ",1";
  return s;
}

std::string temp_path(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name + std::to_string(::getpid());
}

}  // namespace

TEST(Safetensors, RoundTripEveryDtypeAndLayout) {
  Tensor base = make<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  kiln::NamedTensors in = {
      {"f32", base},
      {"f64", make<double>({1.5, -2.25}, {2})},
      {"i32", make<int32_t>({-7, 2147483647}, {1, 2})},
      {"i64", make<int64_t>({INT64_MIN}, {})},  // 0-dim
      {"bool", make<bool>({true, false, true}, {3})},
      {"empty", kiln::api::empty({0, 4}, ScalarType::Float32)},
      {"transposed", base.transpose(0, 1)},  // not contiguous: written in C order
      {"column", base.select(1, 2)},
  };
  kiln::SafetensorsFile out = kiln::load_bytes(kiln::save_bytes(in, {{"who", "test"}}));
  ASSERT_EQ(out.tensors.size(), in.size());
  for (const auto& [name, t] : in) {
    const TensorBase* got = out.find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(got->dtype(), t.dtype()) << name;
    EXPECT_EQ(got->sizes(), t.sizes()) << name;
    EXPECT_TRUE(got->is_contiguous()) << name;
    EXPECT_EQ(bytes_of(*got), bytes_of(t)) << name;
  }
  EXPECT_EQ(kiln_test::values(Tensor(*out.find("transposed"))), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out.tensors.front().first, "bool");  // sorted by name
  EXPECT_EQ(out.metadata, (kiln::SafetensorsMetadata{{"who", "test"}}));
}

TEST(Safetensors, BytesOfASmallFileByHand) {
  // Laid out as the reference writer does: I64 before F32 (descending dtype order), __metadata__ first.
  const std::string header =
      "{\"__metadata__\":{\"k\":\"v\"},\"b\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";
  ASSERT_EQ(header.size(), 132u);
  const std::string expected = std::string("\x88\0\0\0\0\0\0\0", 8) + header + "    " +  // padded to 136
                               std::string("\x02\x01\0\0\0\0\0\0", 8) +                  // 258
                               std::string("\0\0\x80\x3f\0\0\0\xc0", 8);                  // 1.0f, -2.0f
  kiln::NamedTensors in = {{"a", make<float>({1.0f, -2.0f}, {2})}, {"b", make<int64_t>({258}, {})}};
  EXPECT_EQ(kiln::save_bytes(in, {{"k", "v"}}), expected);

  const std::string path = temp_path("small.safetensors");
  kiln::save_file(in, path, {{"k", "v"}});
  kiln::SafetensorsFile f = kiln::load_file(path);
  EXPECT_EQ(bytes_of(*f.find("a")), bytes_of(in[0].second));
  EXPECT_EQ(f.find("b")->item<int64_t>(), 258);
  std::remove(path.c_str());
}

TEST(Safetensors, EmptyFileAndEscapedNames) {
  EXPECT_EQ(kiln::save_bytes({}), std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  // serde_json's escapes: short forms, \u00XX in lowercase hex, non-ASCII as UTF-8.
  const std::string name = "q\"\\\n\x01/\xc3\xa9";
  const std::string header = "{\"q\\\"\\\\\\n\\u0001/\xc3\xa9\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}";
  std::string expected = file_of(header + std::string((8 - header.size() % 8) % 8, ' '), std::string("\x01", 1));
  expected[0] = static_cast<char>(expected.size() - 9);
  EXPECT_EQ(kiln::save_bytes({{name, make<bool>({true}, {1})}}), expected);
  EXPECT_EQ(kiln::load_bytes(expected).tensors[0].first, name);
}

TEST(Safetensors, WriterRejectsBadInput) {
  const Tensor t = make<float>({1}, {1});
  const auto error_of = [](const kiln::NamedTensors& in) -> std::string {
    try {
      kiln::save_bytes(in);
    } catch (const kiln::ValueError& e) {
      return std::string("ValueError: ") + e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of({{"w", t}, {"w", t}}), "ValueError: save_bytes: duplicate tensor name 'w'");
  EXPECT_NE(error_of({{"__metadata__", t}}).find("cannot name a tensor"), std::string::npos);
  EXPECT_NE(error_of({{"bad\xff", t}}).find("'bad\\xff': the name is not valid UTF-8"), std::string::npos);
  EXPECT_NE(error_of({{"u", Tensor()}}).find("tensor 'u' is undefined"), std::string::npos);
  EXPECT_THROW(kiln::save_bytes({{"w", t}}, {{"k", "\xc3"}}), kiln::ValueError);
}

TEST(Safetensors, MissingFileIsAnOSError) {
  try {
    kiln::load_file("/nonexistent/dir/model.safetensors");
    FAIL() << "no error";
  } catch (const kiln::OSError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_EQ(e.filename(), "/nonexistent/dir/model.safetensors");
    EXPECT_EQ(std::string(e.what()), "load_file: /nonexistent/dir/model.safetensors: No such file or directory");
  }
  try {
    kiln::load_file("/");
    FAIL() << "no error";
  } catch (const kiln::OSError& e) {
    EXPECT_EQ(e.error_number(), EISDIR);
  }
  EXPECT_THROW(kiln::save_file({}, "/nonexistent/dir/x.safetensors"), kiln::OSError);
}

// One malformed file per rule; the message must say what is wrong.
TEST(Safetensors, MalformedFiles) {
  const std::string four(4, '\0');
  const auto entry = [](const std::string& body) { return "{\"w\":{" + body + "}}"; };
  const std::string ok = "\"dtype\":\"F32\",\"shape\":[1]";
  struct Case {
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "the file is 0 bytes, too short for the 8-byte header length"},
      {std::string("\x02\0\0\0\0\0\0", 7), "the file is 7 bytes"},
      {std::string("\x01\xe1\xf5\x05\0\0\0\0", 8), "header length 100000001 is over the limit of 100000000 bytes"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "header length 18446744073709551615 is over the limit"},
      {std::string("\x10\0\0\0\0\0\0\0{}", 10), "header length 16 runs past the end of the file (10 bytes)"},
      {file_of(""), "unexpected end of header, expected a value"},
      {file_of("[]"), "the header must be an object, got a list"},
      {file_of("{} x"), "unexpected data after the top-level object"},
      {file_of("{},"), "unexpected data after the top-level object"},
      {file_of("{\"a\":1,}"), "tensor 'a' must be an object, got a number"},
      {file_of("{\"__metadata__\":{\"a\":\"b\",}}"), "trailing comma"},
      {file_of("{/*c*/}"), "expected a string key in double quotes"},
      {file_of("{'w':1}"), "expected a string key in double quotes"},
      {file_of("{\"__metadata__\":{\"k\":\"\x01\"}}"), "control character in a string"},
      {file_of("{\"__metadata__\":{\"k\":\"\\x\"}}"), "invalid escape '\\x'"},
      {file_of("{\"__metadata__\":{\"k\":\"\\ud800\"}}"), "high surrogate not followed by a low surrogate"},
      {file_of("{\"__metadata__\":{\"k\":\"\\udc00\"}}"), "lone low surrogate"},
      {file_of("{\"__metadata__\":{\"k\":\"\\u12g4\"}}"), "four hex digits"},
      {file_of("{\"__metadata__\":{\"k\":\"\xc0\xaf\"}}"), "invalid UTF-8"},      // overlong '/'
      {file_of("{\"__metadata__\":{\"k\":\"\xed\xa0\x80\"}}"), "invalid UTF-8"},  // encoded surrogate
      {file_of("{\"__metadata__\":{\"k\":\"abc"), "unterminated string"},
      {file_of("{\"__metadata__\":{\"k\":1}}"), "__metadata__ entry 'k' must be a string, got a number"},
      {file_of("{\"__metadata__\":null}"), "__metadata__ must be an object, got null"},
      {file_of("{\"__metadata__\":{},\"__metadata__\":{}}"), "duplicate key '__metadata__'"},
      {file_of("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}"), "duplicate key 'k' in __metadata__"},
      {file_of("{\"w\":{" + ok + ",\"data_offsets\":[0,4]},\"w\":{" + ok + ",\"data_offsets\":[4,8]}}", four + four),
       "duplicate tensor name 'w'"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[1]")), "tensor 'w': missing key 'data_offsets'"},
      {file_of(entry(ok + ",\"data_offsets\":[0,4],\"x\":1"), four), "tensor 'w': unexpected key 'x'"},
      {file_of(entry(ok + ",\"data_offsets\":[0,4],\"dtype\":\"F32\""), four), "tensor 'w': duplicate key 'dtype'"},
      {file_of(entry("\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]"), four), "tensor 'w': unknown dtype 'F33'"},
      {file_of(entry("\"dtype\":3,\"shape\":[1],\"data_offsets\":[0,4]"), four), "tensor 'w': dtype must be a string"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), four), "shape entry must be a non-negative integer, got -1"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]"), four), "got 1.0"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]"), four), "got 1e0"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]"), four), "leading zeros"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[NaN],\"data_offsets\":[0,4]"), four), "unexpected character 'N'"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[Infinity],\"data_offsets\":[0,4]"), four), "unexpected character 'I'"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]"), four), "got a string"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[1,],\"data_offsets\":[0,4]"), four), "trailing comma"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]"), four), "got a list"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,4]"), four),
       "shape entry 9223372036854775808 does not fit int64"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]"), four), "is too large"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]"), four),
       "shape [4294967296, 4294967296] has more elements than int64 can count"},
      {file_of(entry("\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]"), four),
       "needs more bytes than 64 bits count"},
      {file_of(entry("\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]"), "xx"), "does not fill whole bytes"},
      {file_of(entry(ok + ",\"data_offsets\":[0]"), four), "data_offsets must be two integers [begin, end], got 1"},
      {file_of(entry(ok + ",\"data_offsets\":[0,4,8]"), four), "data_offsets has more than 2 entries"},
      {file_of(entry(ok + ",\"data_offsets\":[4,0]"), four), "data_offsets [4, 0] end before they begin"},
      {file_of(entry(ok + ",\"data_offsets\":[0,8]"), four + four),
       "tensor 'w': data_offsets [0, 8] do not match shape [1] of F32 (4 bytes)"},
      {file_of(entry(ok + ",\"data_offsets\":[4,8]"), four), "data_offsets [4, 8] run past the end of the data buffer (4 bytes)"},
      {file_of(entry(ok + ",\"data_offsets\":[4,8]"), four + four), "bytes [0, 4) of the data buffer belong to no tensor"},
      {file_of(entry(ok + ",\"data_offsets\":[0,4]"), four + "x"), "the data buffer has 5 bytes but the tensors cover 4"},
      {file_of("{\"a\":{" + ok + ",\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[2,10]}}",
               four + four + "xx"),
       "tensor 'b' (data_offsets [2, 10]) overlaps tensor 'a' (data_offsets [0, 4])"},
      {file_of("{\"a\":{" + ok + ",\"data_offsets\":[0,4]},\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[2,2]}}", four),
       "tensor 'z' (data_offsets [2, 2]) overlaps tensor 'a'"},
      {file_of(std::string(100000, '[')), "the header must be an object, got a list"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":" + std::string(100000, '[')), four), "shape entry must be a non-negative integer, got a list"},
      {file_of(entry("\"dtype\":\"F32\",\"shape\":[" + ones(65) + "],\"data_offsets\":[0,4]"), four),
       "tensor 'w': shape has more than 64 entries"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string err = load_error(cases[i].bytes);
    EXPECT_EQ(err.rfind("load_bytes: f.safetensors: ", 0), 0u) << "case " << i << ": " << err;
    EXPECT_NE(err.find(cases[i].message), std::string::npos) << "case " << i << ": " << err;
  }
}

TEST(Safetensors, KnownDtypeKilnCannotHoldIsATypeError) {
  const std::string f = file_of("{\"h\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", "abcd");
  try {
    kiln::load_bytes(f, "f.safetensors");
    FAIL() << "no error";
  } catch (const kiln::TypeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "load_bytes: f.safetensors: tensor 'h' has dtype U16, which kiln does not support yet "
              "(supported: BOOL, U8, I8, I16, F16, BF16, I32, F32, F64, I64)");
  }
  // A damaged file says so even when it also holds a dtype kiln cannot hold.
  EXPECT_NE(load_error(file_of("{\"h\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", "abc"))
                .find("run past the end of the data buffer"),
            std::string::npos);
}

TEST(Safetensors, SmallIntegerDtypes) {
  // U8, I8 and I16 load as uint8, int8 and int16, little-endian.
  kiln::SafetensorsFile f = kiln::load_bytes(file_of(
      "{\"u\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
      "\"i\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[2,3]},"
      "\"s\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[3,5]}}",
      std::string("\xff\x01\x80\x00\x80", 5)));
  EXPECT_EQ(f.find("u")->dtype(), kiln::ScalarType::UInt8);
  EXPECT_EQ(bytes_of(*f.find("u")), std::string("\xff\x01", 2));
  EXPECT_EQ(f.find("i")->item<int64_t>(), -128);
  EXPECT_EQ(f.find("s")->item<int64_t>(), -32768);
}

TEST(Safetensors, LimitsAndOddButValidFiles) {
  // 64 dims load; leading whitespace and every JSON escape are fine; bool bytes other than 0 and 1 read as true.
  kiln::SafetensorsFile f = kiln::load_bytes(file_of(
      " \t\r\n{\"w\":{\"data_offsets\":[0,4],\"shape\":[" + ones(64) + "],\"dtype\":\"F32\"},"
      "\"b\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[4,7]},"
      "\"__metadata__\":{\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\\"\\\\\":\"\\u0000\"}}  ",
      std::string("\0\0\x80\x3f\x00\x02\xff", 7)));
  EXPECT_EQ(f.find("w")->dim(), 64);
  EXPECT_EQ(f.find("w")->item<float>(), 1.0f);
  EXPECT_EQ(bytes_of(*f.find("b")), std::string("\0\x01\x01", 3));
  EXPECT_EQ(f.metadata.begin()->first, "\xc3\xa9\xf0\x9f\x98\x80/\b\f\n\r\t\"\\");
  EXPECT_EQ(f.metadata.begin()->second, std::string(1, '\0'));
}

TEST(Safetensors, JsonReaderBoundsNesting) {
  const std::string deep(200, '[');
  kiln::serialization::JsonReader r(deep, "test");
  try {
    for (int i = 0; i < 200; ++i) r.begin_array();
    FAIL() << "no error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos) << e.what();
  }
}

// Every prefix of a valid file, and random byte flips of it: a clean kiln::Error or a good load.
TEST(Safetensors, TruncatedAndFlippedFilesNeverCrash) {
  const std::string good = kiln::save_bytes(
      {{"a", make<float>({1, 2, 3}, {3})}, {"b", make<int64_t>({4, 5}, {2, 1})}, {"c", make<bool>({true}, {})}}, {{"k", "v"}});
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(load_error(good.substr(0, n)).rfind("load_bytes: f.safetensors: ", 0), std::string::npos) << n;
  }
  std::mt19937 rng(1234);
  int loaded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    const std::string err = load_error(bad);
    if (err == "(loaded)") ++loaded;
    else EXPECT_EQ(err.rfind("load_bytes: f.safetensors: ", 0), 0u) << err;
  }
  EXPECT_GT(loaded, 0);  // flips inside the data buffer still load
  EXPECT_LT(loaded, 3000);
}
