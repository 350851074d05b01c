// Loading: read the length and the header, check everything (header.h), and only then
// allocate the tensors and read their bytes.
#include <algorithm>
#include <cstring>

#include "generated/api/empty.h"
#include "runtime/serialization/file_io.h"
#include "runtime/serialization/header.h"
#include "runtime/serialization/safetensors.h"

namespace kiln {

using namespace serialization;

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian: read as is");

SafetensorsFile load_from(ByteSource& src, const std::string& where) {
  const uint64_t size = src.size();
  KILN_CHECK(size >= 8, where, ": the file is ", size, " bytes, too short for the 8-byte header length");
  unsigned char len[8];
  src.read_at(0, len, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  KILN_CHECK(n <= kMaxHeaderBytes, where, ": header length ", n, " is over the limit of ", kMaxHeaderBytes, " bytes");
  KILN_CHECK(n <= size - 8, where, ": header length ", n, " runs past the end of the file (", size, " bytes)");
  std::string json(n, '\0');
  src.read_at(8, json.data(), n);
  Header header = parse_header(json, size - 8 - n, where);

  SafetensorsFile file;
  file.metadata = std::move(header.metadata);
  for (const TensorInfo& t : header.tensors) {
    TensorBase out = kiln::empty(t.shape, t.dtype->kiln_type);
    const size_t nbytes = t.end - t.begin;
    if (nbytes) src.read_at(8 + n + t.begin, out.data_ptr(), nbytes);
    if (t.dtype->kiln_type == ScalarType::Bool) {
      // Any byte but 0 and 1 is not a valid C++ bool: read it as true, as NumPy would print it.
      unsigned char* p = static_cast<unsigned char*>(out.data_ptr());
      for (size_t i = 0; i < nbytes; ++i) p[i] = p[i] != 0;
    }
    file.tensors.emplace_back(t.name, std::move(out));
  }
  return file;
}

}  // namespace

const TensorBase* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const auto& entry, const std::string& n) { return entry.first < n; });
  return it != tensors.end() && it->first == name ? &it->second : nullptr;
}

SafetensorsFile load_file(const std::string& path, const std::string& context) {
  InputFile file(path, context);
  return load_from(file, context + ": " + path);
}

SafetensorsFile load_bytes(std::string_view data, const std::string& name, const std::string& context) {
  MemorySource source(data);
  return load_from(source, context + ": " + name);
}

}  // namespace kiln
