// Dispatch keys and sets of them, as PyTorch's: a call's key set is its tensors' backend, plus
// Autograd when it has to record (grad mode on and an input requires grad), plus the keys this
// thread includes, minus the keys it excludes; the call runs the kernel of the highest key that
// has one. The thread-local sets are how a kernel steps below its own key: an autograd kernel
// excludes Autograd while it redispatches (BelowAutogradGuard), and Autocast is included while
// kiln.autocast is on (runtime/dispatch/autocast_state.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace kiln {

// In priority order: a higher value is dispatched to first. Also the column of an op's kernel
// table (Operator<Fn> in dispatcher.h).
enum class DispatchKey : uint8_t {
  CPU = 0,
  CUDA = 1,
  Autograd = 2,
  // Above Autograd, as in PyTorch: the casts autocast inserts are recorded like any other op.
  // Its kernels are the generated `<op>_autocast` wrappers of the ops the schema gives an
  // `autocast:` policy (generated/ops/<op>.cc); other ops fall through.
  Autocast = 3,
  NumKeys = 4,
};
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumKeys);
const char* dispatch_key_name(DispatchKey k);

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k) : bits_(bit(k)) {}
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> keys) {
    for (DispatchKey k : keys) bits_ |= bit(k);
  }
  constexpr bool has(DispatchKey k) const { return (bits_ & bit(k)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_bits(bits_ & ~o.bits_); }
  constexpr DispatchKeySet add(DispatchKey k) const { return from_bits(bits_ | bit(k)); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return from_bits(bits_ & ~bit(k)); }
  constexpr bool operator==(DispatchKeySet o) const { return bits_ == o.bits_; }
  // The highest-priority key (the set must not be empty).
  DispatchKey highest() const { return static_cast<DispatchKey>(31 - __builtin_clz(bits_)); }
  std::string str() const;  // "Autograd, CPU": highest first (kiln.explain)

 private:
  static constexpr uint32_t bit(DispatchKey k) { return 1u << static_cast<int>(k); }
  static constexpr DispatchKeySet from_bits(uint32_t b) {
    DispatchKeySet s;
    s.bits_ = b;
    return s;
  }
  uint32_t bits_ = 0;
};

// The keys every call on this thread adds (included) or drops (excluded).
struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};
LocalDispatchKeySet& local_dispatch_key_set();

// RAII: drops `key` from this thread's calls for a scope (nests; restores the previous sets).
class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKey key) : prev_(local_dispatch_key_set()) {
    local_dispatch_key_set().excluded = prev_.excluded.add(key);
  }
  ~ExcludeDispatchKeyGuard() { local_dispatch_key_set() = prev_; }
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  LocalDispatchKeySet prev_;
};

// RAII: adds `key` to this thread's calls for a scope.
class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKey key) : prev_(local_dispatch_key_set()) {
    local_dispatch_key_set().included = prev_.included.add(key);
  }
  ~IncludeDispatchKeyGuard() { local_dispatch_key_set() = prev_; }
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  LocalDispatchKeySet prev_;
};

// The key set of a call: its backend, Autograd if it must record, then this thread's sets.
inline DispatchKeySet dispatch_keys(DispatchKey backend, bool records_autograd) {
  DispatchKeySet keys(backend);
  if (records_autograd) keys = keys.add(DispatchKey::Autograd);
  const LocalDispatchKeySet& local = local_dispatch_key_set();
  return (keys | local.included) - local.excluded;
}

}  // namespace kiln
