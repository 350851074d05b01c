// The device registry and the device-neutral iterator, with a stand-in second device: a backend
// registered as `cuda` whose "device memory" is host memory it hands out and counts. It shows
// a backend joining without any change to core, and that allocation and copies between devices
// really go through the registry. Its own test binary: registering `cuda` here must not change
// what the other tests see.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "generated/kernels/add.h"
#include "generated/kernels/sum.h"
#include "runtime/core/device_backend.h"
#include "runtime/core/error.h"
#include "runtime/kernels/tensor_iterator.h"
#include "runtime/kernels/tensor_memory.h"

namespace {

using kiln::CopyDirection;
using kiln::Device;
using kiln::DeviceType;
using kiln::ScalarType;
using kiln::TensorBase;

const Device kCpu(DeviceType::CPU), kFake(DeviceType::CUDA);

class CountingAllocator : public kiln::Allocator {
 public:
  void* allocate(size_t nbytes, size_t* capacity) override {
    ++allocations;
    *capacity = nbytes;
    return std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
  }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
  int allocations = 0;
};

class FakeDeviceBackend : public kiln::DeviceBackend {
 public:
  kiln::Allocator* allocator() override { return &alloc; }
  void copy_bytes(void* dst, const void* src, size_t nbytes, CopyDirection direction) override {
    directions.push_back(direction);
    std::memcpy(dst, src, nbytes);
  }
  void zero_bytes(void* dst, size_t nbytes) override { std::memset(dst, 0, nbytes); }
  // Its "kernels" are the CPU's, run on its (host-addressable) memory.
  void copy_elements(const TensorBase& dst, const TensorBase& src, const char* op_name) override {
    ++element_copies;
    kiln::device_backend(DeviceType::CPU, op_name).copy_elements(dst, src, op_name);
  }
  void fill(const TensorBase& dst, const kiln::Scalar& value) override {
    kiln::device_backend(DeviceType::CPU, "fill_").fill(dst, value);
  }
  CountingAllocator alloc;
  std::vector<CopyDirection> directions;
  int element_copies = 0;
};

FakeDeviceBackend& fake() {
  static FakeDeviceBackend backend;
  return backend;
}

TensorBase cpu_floats(std::vector<float> v) {
  TensorBase t = kiln::empty_tensor({static_cast<int64_t>(v.size())}, ScalarType::Float32, kCpu);
  std::copy(v.begin(), v.end(), static_cast<float*>(t.data_ptr()));
  return t;
}

TEST(DeviceRegistry, AnUnregisteredDeviceIsAClearError) {
  ASSERT_FALSE(kiln::has_device_backend(DeviceType::CUDA));
  try {
    kiln::empty_tensor({2}, ScalarType::Float32, kFake);
    FAIL() << "expected an error";
  } catch (const kiln::DeviceUnavailableError& e) {  // Python: AssertionError, as torch's CPU-only builds
    EXPECT_NE(std::string(e.what()).find("kiln not compiled with CUDA enabled"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(kiln::has_device_backend(DeviceType::CPU));  // the CPU backend registered itself
}

class WithFakeDevice : public ::testing::Test {
 protected:
  void SetUp() override { kiln::register_device_backend(DeviceType::CUDA, &fake()); }
  void TearDown() override { kiln::register_device_backend(DeviceType::CUDA, nullptr); }
};

TEST_F(WithFakeDevice, AllocatesThroughTheDevicesAllocator) {
  const int before = fake().alloc.allocations;
  TensorBase t = kiln::zeros_tensor({3, 4}, ScalarType::Float64, kFake);
  EXPECT_EQ(fake().alloc.allocations, before + 1);
  EXPECT_EQ(t.device(), kFake);
  const double* p = static_cast<const double*>(t.data_ptr());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(p[i], 0.0);
}

TEST_F(WithFakeDevice, CopiesBetweenDevicesCastAndGoThroughHostMemory) {
  fake().directions.clear();
  TensorBase src = cpu_floats({1.5f, -2.25f, 3.0f, 1e6f});
  TensorBase on_device = kiln::empty_tensor({4}, ScalarType::Float64, kFake);
  kiln::copy_into(on_device, src, "copy_");
  ASSERT_EQ(fake().directions, std::vector<CopyDirection>{CopyDirection::HostToDevice});
  TensorBase back = kiln::empty_tensor({4}, ScalarType::Int64, kCpu);
  kiln::copy_into(back, on_device, "copy_");
  ASSERT_EQ(fake().directions, (std::vector<CopyDirection>{CopyDirection::HostToDevice, CopyDirection::DeviceToHost}));
  const int64_t* p = static_cast<const int64_t*>(back.data_ptr());
  EXPECT_EQ(p[0], 1);  // float -> int truncates toward zero, as torch
  EXPECT_EQ(p[1], -2);
  EXPECT_EQ(p[2], 3);
  EXPECT_EQ(p[3], 1000000);
  // Same dtype, compact: the bytes move as they are, one hop.
  fake().directions.clear();
  TensorBase same = kiln::empty_tensor({4}, ScalarType::Float64, kCpu);
  kiln::copy_into(same, on_device, "copy_");
  ASSERT_EQ(fake().directions, std::vector<CopyDirection>{CopyDirection::DeviceToHost});
  const double* q = static_cast<const double*>(same.data_ptr());
  EXPECT_EQ(q[0], 1.5);
  EXPECT_EQ(q[1], -2.25);
  EXPECT_EQ(q[3], 1e6);
}

TEST_F(WithFakeDevice, TheIteratorAllocatesItsOutputOnTheOperandsDevice) {
  TensorBase a = kiln::empty_tensor({5}, ScalarType::Float32, kFake);
  kiln::copy_into(a, cpu_floats({1, 2, 3, 4, 5}), "copy_");
  kiln::TensorIterator it(kiln::IteratorConfig::binary("add", a, a, TensorBase()));
  EXPECT_EQ(it.device(), kFake);
  EXPECT_EQ(it.output().device(), kFake);
  // A Python number may join a tensor of any device; a CPU tensor with dims may not.
  kiln::TensorIterator with_number(kiln::IteratorConfig::binary("add", a, kiln::wrap_scalar(2.0), TensorBase()));
  EXPECT_EQ(with_number.device(), kFake);
  try {
    kiln::TensorIterator mixed(kiln::IteratorConfig::binary("add", a, cpu_floats({1, 2, 3, 4, 5}), TensorBase()));
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Expected all tensors to be on the same device"), std::string::npos);
  }
  try {
    kiln::TensorIterator wrong_out(kiln::IteratorConfig::binary("add", a, a, cpu_floats({0, 0, 0, 0, 0})));
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Expected out tensor to have device cuda"), std::string::npos) << e.what();
  }
}

// bfloat16 computed in float32 is converted a chunk at a time inside the loop: no tensor-sized
// float32 temporary is allocated (the old iterator made one per input and one for the output).
TEST(ChunkedConversion, SixteenBitOpsMakeNoFullSizeTemporaries) {
  const int64_t n = 1 << 20;
  TensorBase a = kiln::empty_tensor({n}, ScalarType::BFloat16, kCpu), b = kiln::empty_tensor({n}, ScalarType::BFloat16, kCpu);
  TensorBase out = kiln::empty_tensor({n}, ScalarType::BFloat16, kCpu);
  kiln::fill_tensor(a, 1.5);
  kiln::fill_tensor(b, 0.25);
  const auto before = kiln::cpu_allocator_stats();
  kiln::cpu::add_out(a, b, 2, out);
  const auto after = kiln::cpu_allocator_stats();
  EXPECT_EQ(after.cache_hits + after.cache_misses, before.cache_hits + before.cache_misses);
  const TensorBase f = kiln::cast_to(out, ScalarType::Float32);
  const float* p = static_cast<const float*>(f.data_ptr());
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(p[i], 2.0f);  // 1.5 + 2 * 0.25, exact in bfloat16
}

// Sums of 16-bit floats widen a chunk at a time too, contiguous or strided, to the exact sum.
TEST(ChunkedConversion, SixteenBitSumsMakeNoFullSizeTemporaries) {
  const int64_t n = 1 << 20;
  for (ScalarType dtype : {ScalarType::BFloat16, ScalarType::Float16}) {
    TensorBase a = kiln::empty_tensor({n}, dtype, kCpu);
    kiln::fill_tensor(a, 1.0 / 256);  // sums of powers of two up to 4096: exact in both dtypes
    // Every other element of a [n/2, 2] view, summed over dim 0: the strided path.
    TensorBase pairs = kiln::broadcast_for_read(a, {n}, "test");
    pairs.impl()->set_sizes_and_strides({n / 2, 2}, {2, 1}, 0);
    const auto before = kiln::cpu_allocator_stats();
    const TensorBase total = kiln::cpu::sum_out(a, std::nullopt, false, std::nullopt, TensorBase());
    const int64_t dims[] = {0};
    const TensorBase columns = kiln::cpu::sum_out(pairs, kiln::IntArrayRef(dims, 1), false, std::nullopt, TensorBase());
    const auto after = kiln::cpu_allocator_stats();
    EXPECT_EQ(after.cache_hits + after.cache_misses, before.cache_hits + before.cache_misses);
    EXPECT_EQ(static_cast<float>(*static_cast<const kiln::BFloat16*>(kiln::cast_to(total, ScalarType::BFloat16).data_ptr())),
              n / 256.0f);
    const TensorBase c = kiln::cast_to(columns, ScalarType::Float32);
    EXPECT_EQ(static_cast<const float*>(c.data_ptr())[0], n / 512.0f);
    EXPECT_EQ(static_cast<const float*>(c.data_ptr())[1], n / 512.0f);
  }
}

// An iteration space beyond int32 is split into pieces that each index in 32 bits and together
// cover it: accumulators (stride 0 over dim 0) of an expanded input with 5e9 elements.
TEST(ThirtyTwoBitPieces, SplitTheLargestDimUntilEveryPieceFits) {
  const int64_t rows = 1000000000;
  TensorBase acc_storage = kiln::zeros_tensor({5}, ScalarType::Float32, kCpu);
  TensorBase row = kiln::zeros_tensor({1, 5}, ScalarType::Float32, kCpu);
  TensorBase acc = kiln::broadcast_for_read(acc_storage, {rows, 5}, "test");
  TensorBase input = kiln::broadcast_for_read(row, {rows, 5}, "test");
  kiln::TensorIterator it(kiln::IteratorConfig::reduction_into("sum", acc, input));
  ASSERT_FALSE(it.can_use_32bit_indexing());
  int64_t covered = 0, pieces = 0;
  it.for_each_32bit_piece([&](const kiln::TensorIterator& piece) {
    EXPECT_TRUE(piece.can_use_32bit_indexing());
    EXPECT_EQ(piece.shape().back(), 5);
    covered += piece.numel();
    ++pieces;
  });
  EXPECT_EQ(covered, rows * 5);
  EXPECT_GE(pieces, 4);  // 5e9 / 2^31 > 2
  // A small space is its own single piece.
  kiln::TensorIterator small(kiln::IteratorConfig::binary("add", row, row, TensorBase()));
  int calls = 0;
  small.for_each_32bit_piece([&](const kiln::TensorIterator& piece) { ++calls; EXPECT_EQ(&piece, &small); });
  EXPECT_EQ(calls, 1);
}

}  // namespace
