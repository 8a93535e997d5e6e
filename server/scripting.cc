#include "server/scripting.h"

#include "absl/strings/ascii.h"
#include "server/lua_engine.h"
#include "server/transaction.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

namespace {
std::atomic<uint64_t> next_generation{1};
}  // namespace

ScriptCache::ScriptCache() : generation_(next_generation.fetch_add(1)) {}

void ScriptCache::Add(const std::string& sha, std::string_view body) {
  std::lock_guard lock(mutex_);
  auto [it, added] = scripts_.try_emplace(sha);
  if (!added) return;
  it->second = std::make_shared<const std::string>(body);
  body_bytes_ += body.size();
}

std::shared_ptr<const std::string> ScriptCache::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; ++i)
    lower[i] = absl::ascii_tolower(static_cast<unsigned char>(sha[i]));
  std::lock_guard lock(mutex_);
  auto it = scripts_.find(absl::string_view(lower, 40));
  return it == scripts_.end() ? nullptr : it->second;
}

void ScriptCache::Flush() {
  std::lock_guard lock(mutex_);
  scripts_.clear();
  body_bytes_ = 0;
  generation_.store(next_generation.fetch_add(1), std::memory_order_release);
}

void ScriptCache::BeginRun(LuaEngine* engine, std::string_view function,
                           const std::vector<std::string_view>* command) {
  std::lock_guard lock(run_mutex_);
  function_name_.assign(function);
  command_ = command;
  running_function_.store(!function.empty(), std::memory_order_release);
  wrote_.store(false, std::memory_order_relaxed);
  kill_requested_.store(false, std::memory_order_relaxed);
  running_engine_ = engine;
  run_start_ = std::chrono::steady_clock::now();
  busy_ = false;
  running_.store(true, std::memory_order_release);
}

void ScriptCache::EndRun() {
  std::lock_guard lock(run_mutex_);
  running_.store(false, std::memory_order_release);
  running_function_.store(false, std::memory_order_release);
  kill_requested_.store(false, std::memory_order_release);
  running_engine_ = nullptr;
  command_ = nullptr;
}

bool ScriptCache::GetRunningFunction(RunningFunction* out) {
  std::lock_guard lock(run_mutex_);
  if (running_engine_ == nullptr || function_name_.empty()) return false;
  out->name = function_name_;
  out->command.clear();
  if (command_ != nullptr) out->command.assign(command_->begin(), command_->end());
  out->duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - run_start_)
                         .count();
  return true;
}

ScriptCache::KillResult ScriptCache::RequestKill(bool function_kill) {
  std::lock_guard lock(run_mutex_);
  if (running_engine_ == nullptr) return KillResult::kNotBusy;
  if (wrote_.load(std::memory_order_relaxed)) return KillResult::kUnkillable;
  if (function_kill != !function_name_.empty()) return KillResult::kOtherKind;
  kill_requested_.store(true, std::memory_order_release);
  running_engine_->ArmInterrupt(/*kill=*/true);
  return KillResult::kKilled;
}

bool ScriptCache::WatchForBusy(int64_t threshold_ms, TransactionGate& gate) {
  std::lock_guard lock(run_mutex_);
  if (running_engine_ == nullptr || busy_) return false;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - run_start_)
                           .count();
  if (elapsed < threshold_ms) return false;
  busy_ = true;
  spdlog::warn(
      "Slow script detected: still in execution after {} milliseconds. You can try killing the "
      "script using the {} command. Script name is: {}.",
      elapsed, function_name_.empty() ? "SCRIPT KILL" : "FUNCTION KILL",
      function_name_.empty() ? running_engine_->running_script() : function_name_);
  gate.SetBusy(true);
  running_engine_->ArmInterrupt();
  return true;
}

namespace {
thread_local ServeWhileBusyFn tls_serve = nullptr;
thread_local void* tls_serve_context = nullptr;
}  // namespace

void SetServeWhileBusy(ServeWhileBusyFn serve, void* context) {
  tls_serve = serve;
  tls_serve_context = context;
}

void ServeWhileBusy() {
  if (tls_serve != nullptr) tls_serve(tls_serve_context);
}

size_t ScriptCache::size() const {
  std::lock_guard lock(mutex_);
  return scripts_.size();
}

size_t ScriptCache::body_bytes() const {
  std::lock_guard lock(mutex_);
  return body_bytes_;
}

}  // namespace gigakv::server
