// The profiler's recorder (kiln.profiler, kiln.autograd.profiler): while it runs, every operator
// call, every autograd node the engine evaluates and every user scope (record_function) becomes
// an event with its start and end time, its thread, its enclosing event on that thread (so self
// time = total - children's) and, when asked, its input tensors' shapes. Off, an operator pays one
// relaxed atomic load. The tables and traces are built in Python from what stop() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace profiler {

using Shapes = std::vector<std::vector<int64_t>>;

struct Event {
  std::string name;      // "aten::add", "autograd::engine::evaluate_function: MulBackward0", a user scope's name
  int64_t start_ns = 0;  // steady clock
  int64_t end_ns = 0;    // an event still open at stop() ends there
  int64_t parent = -1;   // index of the enclosing event on the same thread; -1 at the top
  int64_t thread = 0;    // small ids, 1 for the first thread that records
  Shapes shapes;         // one entry per tensor argument, when shapes are recorded
};

namespace detail {
extern std::atomic<bool> g_running;
extern std::atomic<bool> g_shapes;
}  // namespace detail

inline bool enabled() { return detail::g_running.load(std::memory_order_relaxed); }
inline bool records_shapes() { return detail::g_shapes.load(std::memory_order_relaxed); }

// Starts recording from an empty list (torch's "Profiler is already enabled" when running).
void start(bool record_shapes);
// Stops and hands over every event, in the order they began.
std::vector<Event> stop();

// A handle to an open event: the recording it belongs to and its index there, so that an event
// begun before a stop (or a restart) is never closed in the wrong list.
struct Handle {
  int64_t generation = -1;
  int64_t index = -1;
};
Handle begin(std::string name, Shapes shapes = {});
// An operator's event; none when the innermost open event is the same operator (add.Scalar calling
// add.Tensor is one aten::add, as torch's).
Handle begin_op(const char* name, Shapes shapes);
void end(Handle h);

// An event for the lifetime of a scope; nothing when the profiler is off.
class Scope {
 public:
  Scope() = default;
  // An operator's scope; `shapes` is called only when shapes are recorded (it reads the call's tensors).
  template <typename ShapesFn>
  Scope(const char* name, ShapesFn&& shapes) {
    if (enabled()) handle_ = begin_op(name, records_shapes() ? shapes() : Shapes());
  }
  void open(std::string name) {
    if (enabled()) handle_ = begin(std::move(name));
  }
  ~Scope() {
    if (handle_.index >= 0) end(handle_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Handle handle_;
};

// The shapes of a call's tensor arguments (undefined ones as []), for Scope.
template <typename Range>
Shapes shapes_of(const Range& tensors) {
  Shapes out;
  for (const auto* t : tensors) {
    if (t->defined())
      out.emplace_back(t->sizes().begin(), t->sizes().end());
    else
      out.emplace_back();
  }
  return out;
}

}  // namespace profiler
}  // namespace kiln
