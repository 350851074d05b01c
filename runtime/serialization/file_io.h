// Where the bytes of a safetensors file come from and go to: a regular file (POSIX calls,
// errors as kiln::OSError with the errno) or memory (kiln.save / kiln.load on file objects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {
namespace serialization {

// Random-access input of known size: the loader checks the header against size() before it
// reads any tensor data.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Exactly n bytes at `offset` (inside size()) into dst.
  virtual void read_at(uint64_t offset, void* dst, size_t n) = 0;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  uint64_t size() const override { return data_.size(); }
  void read_at(uint64_t offset, void* dst, size_t n) override;

 private:
  std::string_view data_;
};

// A regular file opened for reading; `context` ("load_file") prefixes error messages.
class InputFile : public ByteSource {
 public:
  InputFile(const std::string& path, const std::string& context);
  ~InputFile() override;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  uint64_t size() const override { return size_; }
  void read_at(uint64_t offset, void* dst, size_t n) override;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_, context_;
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, size_t n) = 0;
};

class StringSink : public ByteSink {
 public:
  void write(const void* data, size_t n) override { out.append(static_cast<const char*>(data), n); }
  std::string out;
};

// Creates or truncates `path`. close() reports a failed final write; the destructor closes
// quietly (after an exception elsewhere).
class OutputFile : public ByteSink {
 public:
  OutputFile(const std::string& path, const std::string& context);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const void* data, size_t n) override;
  void close();

 private:
  int fd_ = -1;
  std::string path_, context_;
};

}  // namespace serialization
}  // namespace kiln
