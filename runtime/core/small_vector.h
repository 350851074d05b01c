// A vector that keeps up to N elements inline (no heap allocation), for sizes
// and strides. Hand-written rather than absl::InlinedVector because that header
// alone costs 0.45 s of compile time in every file that includes a tensor, which
// made adding an operator rebuild in 66 s instead of the 60 s goal (measured).
// Only for trivially copyable T.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>

namespace kiln {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { assign(n, value); }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(std::initializer_list<T> l) { assign(l.begin(), l.end()); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { move_from(o); }
  ~SmallVector() {
    if (heap_) std::free(data_);
  }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      if (heap_) std::free(data_);
      move_from(o);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void clear() { size_ = 0; }
  void push_back(T v) {
    if (size_ == capacity_) grow(capacity_ * 2);
    data_[size_++] = v;
  }
  void resize(size_t n, T value = T()) {
    if (n > capacity_) grow(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void assign(size_t n, T value) {
    size_ = 0;
    resize(n, value);
  }
  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(last - first);
    if (n > capacity_) grow(n);
    size_ = 0;
    for (; first != last; ++first) data_[size_++] = static_cast<T>(*first);
  }
  T* erase(T* pos) {
    std::memmove(pos, pos + 1, (end() - pos - 1) * sizeof(T));
    --size_;
    return pos;
  }
  T* insert(T* pos, T v) {
    const size_t i = static_cast<size_t>(pos - data_);
    if (size_ == capacity_) grow(capacity_ * 2);
    std::memmove(data_ + i + 1, data_ + i, (size_ - i) * sizeof(T));
    data_[i] = v;
    ++size_;
    return data_ + i;
  }

 private:
  void grow(size_t n) {
    T* fresh = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (fresh == nullptr) throw std::bad_alloc();
    std::memcpy(fresh, data_, size_ * sizeof(T));
    if (heap_) std::free(data_);
    data_ = fresh;
    capacity_ = n;
    heap_ = true;
  }
  void move_from(SmallVector& o) {
    if (o.heap_) {
      data_ = o.data_;
      capacity_ = o.capacity_;
      heap_ = true;
      o.data_ = o.inline_;
      o.capacity_ = N;
      o.heap_ = false;
    } else {
      data_ = inline_;
      capacity_ = N;
      heap_ = false;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
  bool heap_ = false;
};

}  // namespace kiln
