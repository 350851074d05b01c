// Saving: check the names and tensors, lay them out as the reference writer does (by
// descending dtype rank, then name), write the length, the header, then each tensor's bytes.
#include <algorithm>

#include "generated/api/tensor.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/serialization/file_io.h"
#include "runtime/serialization/header.h"
#include "runtime/serialization/safetensors.h"
#include "runtime/serialization/utf8.h"

namespace kiln {

using namespace serialization;

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian: written as is");

struct Plan {
  std::vector<TensorInfo> layout;  // in file order, offsets set
  std::vector<TensorBase> data;    // the tensor of each layout entry
  std::string header;
};

void check_inputs(const NamedTensors& tensors, const SafetensorsMetadata& metadata, const std::string& where) {
  for (const auto& [name, t] : tensors) {
    const std::string who = where + ": tensor " + quote_name(name);
    KILN_CHECK_VALUE(is_valid_utf8(name), who, ": the name is not valid UTF-8");
    KILN_CHECK_VALUE(name != "__metadata__", where, ": '__metadata__' names the metadata and cannot name a tensor");
    KILN_CHECK_VALUE(t.defined(), who, " is undefined");
    KILN_CHECK(t.is_cpu(), who, " is on ", t.device().str(), "; only CPU tensors can be saved");
    KILN_CHECK_TYPE(dtype_for(t.dtype()) != nullptr, who, " has dtype ", scalar_type_name(t.dtype()),
                    ", which safetensors cannot store");
  }
  std::vector<const std::string*> names;
  for (const auto& entry : tensors) names.push_back(&entry.first);
  std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  for (size_t i = 1; i < names.size(); ++i) {
    KILN_CHECK_VALUE(*names[i] != *names[i - 1], where, ": duplicate tensor name ", quote_name(*names[i]));
  }
  for (const auto& [key, value] : metadata) {
    KILN_CHECK_VALUE(is_valid_utf8(key), where, ": metadata key ", quote_name(key), " is not valid UTF-8");
    KILN_CHECK_VALUE(is_valid_utf8(value), where, ": metadata value of ", quote_name(key), " is not valid UTF-8");
  }
}

Plan make_plan(const NamedTensors& tensors, const SafetensorsMetadata& metadata, const std::string& where) {
  check_inputs(tensors, metadata, where);
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto rank = [&](size_t i) { return dtype_rank(dtype_for(tensors[i].second.dtype())); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rank(a) != rank(b) ? rank(a) > rank(b) : tensors[a].first < tensors[b].first;
  });
  Plan plan;
  uint64_t offset = 0;
  for (size_t i : order) {
    const TensorBase& t = tensors[i].second;
    TensorInfo info;
    info.name = tensors[i].first;
    info.dtype = dtype_for(t.dtype());
    info.shape = t.sizes().vec();
    info.begin = offset;
    // An expanded view can count more elements than memory holds: check before writing anything.
    int64_t nbytes = 0;
    KILN_CHECK(!__builtin_mul_overflow(t.numel(), t.element_size(), &nbytes) &&
                   !__builtin_add_overflow(static_cast<int64_t>(offset), nbytes, &nbytes),
               where, ": the tensors need more bytes than int64 can count");
    offset = static_cast<uint64_t>(nbytes);
    info.end = offset;
    plan.layout.push_back(std::move(info));
    plan.data.push_back(t);
  }
  plan.header = write_header(plan.layout, metadata);
  return plan;
}

void write(const Plan& plan, ByteSink& sink) {
  unsigned char len[8];
  uint64_t n = plan.header.size();
  for (int i = 0; i < 8; ++i, n >>= 8) len[i] = static_cast<unsigned char>(n & 0xFF);
  sink.write(len, 8);
  sink.write(plan.header.data(), plan.header.size());
  NoGradGuard no_grad;  // the contiguous copies below are not part of any computation
  for (size_t i = 0; i < plan.layout.size(); ++i) {
    const size_t nbytes = plan.layout[i].end - plan.layout[i].begin;
    if (nbytes == 0) continue;
    const Tensor bytes = Tensor(plan.data[i]).contiguous();
    sink.write(bytes.data_ptr(), nbytes);
  }
}

}  // namespace

void save_file(const NamedTensors& tensors, const std::string& path, const SafetensorsMetadata& metadata,
               const std::string& context) {
  const Plan plan = make_plan(tensors, metadata, context + ": " + path);  // before the file is truncated
  OutputFile file(path, context);
  write(plan, file);
  file.close();
}

std::string save_bytes(const NamedTensors& tensors, const SafetensorsMetadata& metadata, const std::string& context) {
  const Plan plan = make_plan(tensors, metadata, context);
  StringSink sink;
  sink.out.reserve(8 + plan.header.size() + (plan.layout.empty() ? 0 : plan.layout.back().end));
  write(plan, sink);
  return std::move(sink.out);
}

}  // namespace kiln
