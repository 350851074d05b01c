// A minimal intrusive reference count: the count lives in the object, so a
// handle is one pointer and copying it is one atomic increment.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace kiln {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when this was the last reference.
  bool decref() const { return refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int64_t> refcount_{0};
};

template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* p) : p_(p) {
    if (p_) p_->incref();
  }
  Ref(const Ref& o) : p_(o.p_) {
    if (p_) p_->incref();
  }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U>
  Ref(Ref<U>&& o) noexcept : p_(o.release()) {}
  ~Ref() { reset(); }

  Ref& operator=(const Ref& o) {
    Ref(o).swap(*this);
    return *this;
  }
  Ref& operator=(Ref&& o) noexcept {
    Ref(std::move(o)).swap(*this);
    return *this;
  }

  template <typename... Args>
  static Ref make(Args&&... args) {
    return Ref(new T(std::forward<Args>(args)...));
  }

  void reset() {
    if (p_ && p_->decref()) delete p_;
    p_ = nullptr;
  }
  T* release() {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  void swap(Ref& o) noexcept { std::swap(p_, o.p_); }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }
  bool operator!=(const Ref& o) const { return p_ != o.p_; }

 private:
  T* p_ = nullptr;
};

}  // namespace kiln
