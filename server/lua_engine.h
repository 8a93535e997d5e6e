// One Lua state set up as Redis 7.0 sets up its own, and what runs scripts in it.
//
//   state      LuaJIT 2.1 with its JIT off (interpreter only: count hooks fire in every loop,
//              which the busy-script limit needs), the libraries Redis opens (base, table,
//              string, math, bit, cjson...), Redis's sandbox: no os/io/package/require/loadfile/
//              dofile/ffi/jit, globals protected (a script can neither create nor read a missing
//              global), math.random on Redis's own generator (one state for the process,
//              never reseeded between scripts, as in Redis 7.0). Only source text loads:
//              LuaJIT bytecode, which it never verifies, is refused as Redis refuses it.
//   scripts    a body compiles once per state into a function kept in the registry; Run calls it
//   with KEYS and ARGV set. redis.*    call and pcall run a command through the dispatcher as the
//   engine's own script
//              client (in the caller's db, RESP2 unless redis.setresp(3)); its reply comes back
//              as Lua values with Redis's conversions, and a script's result goes out the same way
//              in reverse (see lua_engine.cc).
//
// Threading: one engine per thread (ThreadEngine); never shared. Errors: a compile or run-time
// error is a Redis error reply; nothing throws out of the engine (Lua errors stay inside pcall).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "protocol/reply_builder.h"

struct lua_State;
struct lua_Debug;

namespace gigakv::server {

// lauxlib.h's LUA_NOREF, without including Lua here.
inline constexpr int kNoLuaRef = -2;

struct CommandContext;
struct CommandSpec;
class ClientState;

// One script to run: the caller's command context (its client, db and reply), the script's
// name and body, and its KEYS and ARGV.
struct ScriptInvocation {
  CommandContext& caller;
  std::string_view sha;  // 40 lower-case hex digits.
  std::string_view body;
  absl::Span<const std::string_view> keys;  // Views into the caller's arguments.
  absl::Span<const std::string_view> args;
  bool read_only = false;  // EVAL_RO / EVALSHA_RO: write commands are refused.
  // The server was over maxmemory when the script started: its deny-oom commands are refused
  // until it has written (Redis's scriptVerifyOOM).
  bool oom_at_start = false;
  // FCALL: the function's callback (a registry reference in the functions engine), called with
  // KEYS and ARGV as its two arguments; `sha` is then the function's name (errors name it) and
  // `body` is unused. 0 for EVAL.
  int function_ref = 0;
};

// ScriptFlags' mark of a script that has a shebang line (its ScriptFlag bits then apply).
inline constexpr uint32_t kShebangPresent = 1u << 31;

// The flags a script declares (`#!lua flags=...`) or a function registers, as Redis's
// scripts_flags_def, in its order (FUNCTION LIST shows them in this order).
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1 << 0,
  kScriptAllowOom = 1 << 1,
  kScriptAllowStale = 1 << 2,
  kScriptNoCluster = 1 << 3,
  kScriptAllowCrossSlot = 1 << 4,
};
struct ScriptFlagName {
  ScriptFlag flag;
  std::string_view name;
};
inline constexpr ScriptFlagName kScriptFlagNames[] = {
    {kScriptNoWrites, "no-writes"},
    {kScriptAllowOom, "allow-oom"},
    {kScriptAllowStale, "allow-stale"},
    {kScriptNoCluster, "no-cluster"},
    {kScriptAllowCrossSlot, "allow-cross-slot-keys"},
};

// A function a library's code registered with redis.register_function (FUNCTION LOAD).
struct RegisteredFunction {
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;  // ScriptFlag bits.
  int ref = 0;         // The callback: a registry reference in the engine that loaded it.
};

class LuaEngine {
 public:
  // kEval: EVAL's scripts (KEYS and ARGV globals). kFunctions: FUNCTION LOAD's libraries, whose
  // code runs once with only the library API visible (redis.register_function, redis.log,
  // the LOG_* constants and REDIS_VERSION*), and whose functions run with the full API.
  enum class Kind : uint8_t { kEval, kFunctions };
  explicit LuaEngine(uint64_t generation, Kind kind = Kind::kEval);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // The ScriptCache generation this state was made for.
  uint64_t generation() const { return generation_; }

  // Compiles `body` as the script `sha` unless this state has it already. On a syntax error
  // returns false with Redis's error text in `error`.
  bool Compile(std::string_view sha, std::string_view body, std::string* error);

  // What the caller recorded of a script this engine compiled (its shebang: kShebangPresent and
  // ScriptFlag bits), or nothing when it has not compiled it or nothing was recorded.
  std::optional<uint32_t> ScriptFlags(std::string_view sha) const;
  void SetScriptFlags(std::string_view sha, uint32_t flags);

  // Runs the script (compiling it first if needed) and writes its result, or its error, to the
  // caller's reply.
  void Run(const ScriptInvocation& invocation);

  // FUNCTION LOAD (a kFunctions engine): runs a library's `code` (its shebang line already cut,
  // its line kept) once, collecting what it registers. Past `timeout_ms` (0: none) of running,
  // it stops with "FUNCTION LOAD timeout". On an error returns false with Redis's text (without
  // the ERR code: "Error compiling function: ..." / "Error registering functions: ...") and
  // releases whatever was registered.
  bool LoadLibrary(std::string_view code, int64_t timeout_ms,
                   std::vector<RegisteredFunction>* registered, std::string* error);
  // Releases the callbacks of functions that are dropped (FUNCTION DELETE, a replaced library).
  void Release(const std::vector<RegisteredFunction>& functions);

  // The Lua state's memory in bytes (used_memory_lua).
  size_t memory_bytes() const;

  // From any thread, while a script runs (ScriptCache's watchdog, SCRIPT KILL): installs the
  // hook that serves the thread's other clients (ServeWhileBusy) and stops the script once it
  // is asked to (SCRIPT KILL, shutdown). Lua's hooks may be set asynchronously.
  void ArmInterrupt(bool kill = false);
  // The SHA-1 of the script running now (for the slow-script log line); any thread, while
  // the caller holds ScriptCache's run lock.
  std::string running_script() const { return running_name_; }

 private:
  struct RunState;

  static int RedisCall(lua_State* lua);
  static int RedisPcall(lua_State* lua);
  static int RedisCallImpl(lua_State* lua, bool raise);
  static int RedisSetResp(lua_State* lua);
  static int RedisAclCheckCmd(lua_State* lua);
  static void Hook(lua_State* lua, lua_Debug* debug);
  static int RegisterFunction(lua_State* lua);
  static void LoadHook(lua_State* lua, lua_Debug* debug);
  // Points the scripts' globals at the registry table `key` (the full globals or the library
  // API), as Redis swaps its globals' __index around a library's load.
  void SetGlobalsView(const char* key);
  struct LoadState;
  // Redis's sandbox: removed functions, read-only globals and libraries.
  void Protect();

  static constexpr int kGcPeriod = 50;

  lua_State* lua_ = nullptr;
  // The compiled scripts: SHA-1 -> the function's registry reference and what the caller
  // recorded of its shebang.
  struct CompiledScript {
    int ref = 0;
    std::optional<uint32_t> flags;
  };
  absl::flat_hash_map<std::string, CompiledScript> functions_;
  int runs_since_gc_ = 0;
  int64_t reported_memory_ = 0;  // This state's share of LuaMemoryBytes().
  void ReportMemory();
  const uint64_t generation_;
  std::unique_ptr<ClientState> script_client_;
  // A redis.call's arguments, reused from call to call: views of its strings (on the Lua stack)
  // and its numbers as text.
  std::vector<std::string_view> call_args_;
  std::vector<std::string> number_args_;
  struct CachedCommand {
    std::string name;  // As the script wrote it.
    const CommandSpec* spec = nullptr;
  };
  std::array<CachedCommand, 16> command_cache_;  // By the name's (interned) string address.
  RunState* running_ = nullptr;                  // Set while Run runs.
  int globals_ref_ = kNoLuaRef;                  // Registry references: the real globals and
  int error_handler_ref_ = kNoLuaRef;            // the error handler.
  LoadState* loading_ = nullptr;                 // Set while LoadLibrary runs.
  const Kind kind_;
  std::string running_name_;
  bool killed_ = false;                  // The running script was told to stop.
  std::atomic<bool> kill_armed_{false};  // The hook raises on every line (ArmInterrupt).
};

// The memory of every thread's Lua state (INFO used_memory_lua), as last measured: when a state
// is made or goes, and every 50 scripts it runs.
int64_t LuaMemoryBytes();

// The calling thread's engine, made anew when `generation` (the script cache's) moved since it
// was made.
LuaEngine& ThreadEngine(uint64_t generation);

}  // namespace gigakv::server
