// Scripting: EVAL's Lua (Redis's eval.c and script_lua.c).
//
//   cache      ScriptCache holds every script body by its SHA-1 (EVAL and SCRIPT LOAD add,
//              SCRIPT FLUSH empties), shared by all I/O threads under a mutex. A flush bumps its
//              generation.
//   engines    each thread that runs a script has its own Lua state (LuaEngine, lua_engine.h),
//              made on first use with Redis's libraries and sandbox; it compiles a cached body on
//              its first run there and is made anew when the cache's generation moved (Redis
//              resets its one Lua state on SCRIPT FLUSH). Lua states never cross threads.
//   running    a script runs as one unit, as EXEC does: it holds the transaction gate's
//              exclusive scope, so no command of any client on any I/O thread runs until it
//              ends; its writes publish one change-stream group (logged as one transaction), and
//              the messages it publishes reach other clients after it.
//
// Threading: ScriptCache is thread-safe; LuaEngine is its thread's own (ThreadEngine).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace gigakv::server {

class LuaEngine;
class TransactionGate;

class ScriptCache {
 public:
  ScriptCache();
  ScriptCache(const ScriptCache&) = delete;
  ScriptCache& operator=(const ScriptCache&) = delete;

  // Stores `body` under `sha` (its Sha1Hex), if not already there.
  void Add(const std::string& sha, std::string_view body);
  // The body of the script `sha` (40 hex digits, any case), or null.
  std::shared_ptr<const std::string> Find(std::string_view sha) const;
  bool Contains(std::string_view sha) const { return Find(sha) != nullptr; }
  // SCRIPT FLUSH: forgets every script; engines made before it start anew.
  void Flush();

  // Unique in the process (each cache starts a new one; Flush takes another): a thread's engine
  // made for another generation is replaced before its next run, also when a new server (in
  // tests) follows an old one on the same thread.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // number_of_cached_scripts and the bodies' bytes (used_memory_scripts_eval).
  size_t size() const;
  size_t body_bytes() const;

  // ---- the running script: one at a time, since a script holds the transaction gate --------
  // Begin/End on the script's thread around its run; MarkWrote when it runs a write command.
  // Scripts run without a Lua hook (a hook slows LuaJIT's interpreter down); the watchdog arms
  // one (LuaEngine::ArmInterrupt) once a script is busy or asked to stop.
  // `function`: FCALL's function name (empty for EVAL); `command`: the caller's arguments, valid
  // until EndRun (FUNCTION STATS shows them).
  void BeginRun(LuaEngine* engine, std::string_view function = {},
                const std::vector<std::string_view>* command = nullptr);
  void EndRun();
  // The cron's watchdog: once the running script has run for `threshold_ms`, it is busy: logged
  // as Redis logs it, `gate` lets other threads answer BUSY, and its hook is armed (it serves the
  // script thread's other clients and stops the script when asked). Returns true when the
  // script became busy just now.
  bool WatchForBusy(int64_t threshold_ms, TransactionGate& gate);
  void MarkWrote() { wrote_.store(true, std::memory_order_relaxed); }
  bool running() const { return running_.load(std::memory_order_acquire); }
  // Whether the running script is a function (FCALL): BUSY and the kill commands name FUNCTION
  // KILL then, SCRIPT KILL otherwise.
  bool running_function() const { return running_function_.load(std::memory_order_acquire); }
  // FUNCTION STATS' running_script: the function running now, its command and how long it has
  // run. False when no function runs.
  struct RunningFunction {
    std::string name;
    std::vector<std::string> command;
    int64_t duration_ms = 0;
  };
  bool GetRunningFunction(RunningFunction* out);
  bool wrote() const { return wrote_.load(std::memory_order_relaxed); }
  // SCRIPT KILL, from any thread: kKilled asks the running script to stop (its hook raises
  // "Script killed by user..."); a script that wrote cannot be stopped (its writes would be
  // half done).
  // kOtherKind: SCRIPT KILL while a function runs, or FUNCTION KILL while an EVAL script runs
  // (Redis answers the running kind's BUSY error).
  enum class KillResult { kNotBusy, kUnkillable, kOtherKind, kKilled };
  KillResult RequestKill(bool function_kill = false);
  bool kill_requested() const { return kill_requested_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const std::string>> scripts_;
  size_t body_bytes_ = 0;
  std::atomic<uint64_t> generation_;
  std::atomic<bool> running_{false};
  std::atomic<bool> wrote_{false};
  std::atomic<bool> kill_requested_{false};
  std::atomic<bool> running_function_{false};
  // Guards the running engine against the watchdog arming it as it ends.
  std::mutex run_mutex_;
  LuaEngine* running_engine_ = nullptr;
  std::chrono::steady_clock::time_point run_start_;
  std::string function_name_;
  const std::vector<std::string_view>* command_ = nullptr;
  bool busy_ = false;
};

// While a script is busy (past busy-reply-threshold) its thread serves its other connections
// from the script's hook, as Redis processes events while a script runs: they get BUSY or run
// the commands allowed meanwhile (SCRIPT KILL...). An I/O thread registers how (thread-local);
// elsewhere (tests) nothing is served.
using ServeWhileBusyFn = void (*)(void* context);
void SetServeWhileBusy(ServeWhileBusyFn serve, void* context);
void ServeWhileBusy();

}  // namespace gigakv::server
