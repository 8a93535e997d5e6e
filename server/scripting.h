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
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace gigakv::server {

class ScriptCache {
 public:
  ScriptCache() = default;
  ScriptCache(const ScriptCache&) = delete;
  ScriptCache& operator=(const ScriptCache&) = delete;

  // Stores `body` under `sha` (its Sha1Hex), if not already there.
  void Add(const std::string& sha, std::string_view body);
  // The body of the script `sha` (40 hex digits, any case), or null.
  std::shared_ptr<const std::string> Find(std::string_view sha) const;
  bool Contains(std::string_view sha) const { return Find(sha) != nullptr; }
  // SCRIPT FLUSH: forgets every script; engines made before it start anew.
  void Flush();

  // Bumped by Flush: an engine of an older generation is replaced before its next run.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // number_of_cached_scripts and the bodies' bytes (used_memory_scripts_eval).
  size_t size() const;
  size_t body_bytes() const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const std::string>> scripts_;
  size_t body_bytes_ = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace gigakv::server
