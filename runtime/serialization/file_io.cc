#include "runtime/serialization/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "runtime/core/os_error.h"

namespace kiln {
namespace serialization {

namespace {
// Linux transfers at most ~2 GiB per read/write call; larger requests just loop.
constexpr size_t kMaxChunk = size_t{1} << 30;
}  // namespace

void MemorySource::read_at(uint64_t offset, void* dst, size_t n) {
  if (n) std::memcpy(dst, data_.data() + offset, n);
}

InputFile::InputFile(const std::string& path, const std::string& context) : path_(path), context_(context) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw OSError(errno, path, context);
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw OSError(err, path, context);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    // A directory is EISDIR, as Python's open() says; pipes and devices have no size to check against.
    if (S_ISDIR(st.st_mode)) throw OSError(EISDIR, path, context);
    throw Error(context + ": " + path + ": not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(uint64_t offset, void* dst, size_t n) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, p, std::min(n, kMaxChunk), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw OSError(errno, path_, context_);
    if (got == 0) throw Error(context_ + ": " + path_ + ": the file got shorter while it was read");
    p += got, offset += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
  }
}

OutputFile::OutputFile(const std::string& path, const std::string& context) : path_(path), context_(context) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw OSError(errno, path, context);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, p, std::min(n, kMaxChunk));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) throw OSError(errno, path_, context_);
    p += put, n -= static_cast<size_t>(put);
  }
}

void OutputFile::close() {
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw OSError(errno, path_, context_);
}

}  // namespace serialization
}  // namespace kiln
