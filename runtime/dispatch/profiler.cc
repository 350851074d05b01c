#include "runtime/dispatch/profiler.h"

#include <chrono>
#include <mutex>
#include <utility>

#include "runtime/core/error.h"

namespace kiln {
namespace profiler {
namespace detail {
std::atomic<bool> g_running{false};
std::atomic<bool> g_shapes{false};
}  // namespace detail

namespace {

struct Recording {
  std::mutex mutex;
  std::vector<Event> events;
  int64_t generation = 0;  // bumped by every start()
};

Recording& recording() {
  static Recording* r = new Recording();  // never destroyed: scopes may close during exit
  return *r;
}

// The events open on this thread, innermost last, as handles of the recording they began in.
thread_local std::vector<Handle> tls_open;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t thread_id() {
  static std::atomic<int64_t> next{1};
  thread_local int64_t id = next.fetch_add(1);
  return id;
}

}  // namespace

void start(bool record_shapes) {
  Recording& r = recording();
  std::lock_guard<std::mutex> lock(r.mutex);
  KILN_CHECK(!detail::g_running.load(), "Profiler is already enabled: stop the running profiler before starting another");
  r.events.clear();
  r.generation += 1;
  detail::g_shapes.store(record_shapes);
  detail::g_running.store(true);
}

std::vector<Event> stop() {
  Recording& r = recording();
  std::lock_guard<std::mutex> lock(r.mutex);
  KILN_CHECK(detail::g_running.load(), "Profiler is not running");
  detail::g_running.store(false);
  const int64_t t = now_ns();
  for (Event& e : r.events)
    if (e.end_ns == 0) e.end_ns = t;
  return std::exchange(r.events, {});
}

namespace {

Handle begin_event(std::string name, Shapes shapes, bool op) {
  Recording& r = recording();
  Event e;
  e.name = std::move(name);
  e.shapes = std::move(shapes);
  e.thread = thread_id();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!detail::g_running.load()) return {};
  while (!tls_open.empty() && tls_open.back().generation != r.generation) tls_open.pop_back();
  if (!tls_open.empty()) e.parent = tls_open.back().index;
  if (op && e.parent >= 0 && r.events[static_cast<size_t>(e.parent)].name == e.name) return {};
  e.start_ns = now_ns();
  const Handle h{r.generation, static_cast<int64_t>(r.events.size())};
  r.events.push_back(std::move(e));
  tls_open.push_back(h);
  return h;
}

}  // namespace

Handle begin(std::string name, Shapes shapes) { return begin_event(std::move(name), std::move(shapes), false); }
Handle begin_op(const char* name, Shapes shapes) { return begin_event(name, std::move(shapes), true); }

void end(Handle h) {
  const int64_t t = now_ns();
  Recording& r = recording();
  std::lock_guard<std::mutex> lock(r.mutex);
  // Closed out of order (a user scope left early) or left over from an earlier recording: drop
  // the handle from this thread's stack all the same.
  for (size_t i = tls_open.size(); i-- > 0;) {
    if (tls_open[i].generation == h.generation && tls_open[i].index == h.index) {
      tls_open.erase(tls_open.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (!detail::g_running.load() || h.generation != r.generation) return;
  Event& e = r.events[static_cast<size_t>(h.index)];
  if (e.end_ns == 0) e.end_ns = t;
}

}  // namespace profiler
}  // namespace kiln
