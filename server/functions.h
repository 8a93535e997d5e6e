// FUNCTION's libraries (Redis 7.0's functions.c and function_lua.c).
//
//   library    FUNCTION LOAD's code: a first line `#!lua name=<library>` (the engine, case-
//              insensitive, and the name: letters, digits, underscores), then Lua that runs once,
//              at load, and registers its functions with redis.register_function. The code is
//              kept whole (with its first line): FUNCTION LIST WITHCODE, DUMP, snapshots and the
//              log carry it, and loading it again rebuilds the library.
//   functions  named across all libraries case-insensitively (FCALL f and FCALL F are one
//              function; two libraries cannot both have it), within one library case-sensitively
//              as in Redis. Each keeps its flags (no-writes, allow-oom...) and description.
//   engine     one Lua state for every library (as Redis's): a library's upvalues persist from
//              one FCALL to the next whichever I/O thread runs it, because functions run one at a
//              time under the transaction gate. FUNCTION FLUSH makes a new state.
//
// Threading: Load, Delete, Flush, Restore, Find's result and engine() are for the holder of the
// transaction gate's exclusive scope (FUNCTION LOAD/DELETE/FLUSH/RESTORE and FCALL take it), or
// for the only thread at start-up (loading a snapshot). The readers (ForEachLibrary, Codes,
// Dump, the counts) may run on any thread: a mutex guards the libraries against a concurrent
// change. Errors are Redis's reply texts, "ERR ..." included.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/lua_engine.h"

namespace gigakv::server {

class FunctionLibraries {
 public:
  // FUNCTION LOAD's time limit for a library's code (Redis's LOAD_TIMEOUT_MS); the log's replay
  // and snapshots load without one, as Redis loads its AOF and RDB.
  static constexpr int64_t kLoadTimeoutMs = 500;

  struct Library {
    std::string name;
    std::string code;  // Whole, first line included.
    std::vector<RegisteredFunction> functions;
  };
  // What FCALL needs of a function.
  struct FunctionRef {
    const Library* library = nullptr;
    const RegisteredFunction* function = nullptr;
  };
  enum class RestorePolicy : uint8_t { kAppend, kReplace, kFlush };
  // A library's first line, `#!<engine> name=<name>`, as parsed and checked.
  struct Metadata {
    std::string engine;
    std::string name;
    size_t body_at = 0;  // Where the Lua starts: the first line's '\n' (line numbers count it).
  };

  FunctionLibraries();
  ~FunctionLibraries();
  FunctionLibraries(const FunctionLibraries&) = delete;
  FunctionLibraries& operator=(const FunctionLibraries&) = delete;

  // FUNCTION LOAD [REPLACE]: the library's name, or the error reply's text.
  absl::StatusOr<std::string> Load(std::string_view code, bool replace, int64_t timeout_ms);
  // FUNCTION DELETE: false when there is no such library.
  bool Delete(std::string_view name);
  // FUNCTION FLUSH: every library goes, with the Lua state they ran in.
  void Flush();
  // FUNCTION RESTORE: the libraries of a FUNCTION DUMP payload (verified first), added as
  // `policy` says; all or nothing.
  absl::Status Restore(std::string_view payload, RestorePolicy policy);
  // FUNCTION DUMP: `FUNCTION2 code` for each library, the RDB version and the CRC-64.
  std::string Dump(bool compress) const;

  // The function named `name` (any case); false when there is none. The pointers stay valid
  // while the caller holds the gate exclusively.
  bool Find(std::string_view name, FunctionRef* out) const;
  // The functions' Lua state (made on first use).
  LuaEngine& engine();

  // Every library in name order, under the readers' lock (`visit` must not call back here).
  void ForEachLibrary(const std::function<void(const Library&)>& visit) const;
  // Every library's code, for a snapshot (in name order).
  std::vector<std::string> Codes() const;
  size_t library_count() const;
  size_t function_count() const;
  // The Lua state's memory (used_memory_vm_functions), as of the last change; and the bytes the
  // libraries' code, names and descriptions hold (used_memory_functions).
  int64_t vm_memory_bytes() const { return vm_memory_.load(std::memory_order_relaxed); }
  int64_t overhead_bytes() const { return overhead_.load(std::memory_order_relaxed); }
  // Measures the Lua state's memory again (after a function ran; gate holder only).
  void RefreshMemory() {
    if (engine_ != nullptr) {
      vm_memory_.store(static_cast<int64_t>(engine_->memory_bytes()), std::memory_order_relaxed);
    }
  }

 private:
  using LibraryMap = std::map<std::string, std::unique_ptr<Library>, std::less<>>;
  // Runs `code` (whose first line `metadata` is, checked) into a new library, not linked.
  absl::StatusOr<std::unique_ptr<Library>> Create(std::string_view code, const Metadata& metadata,
                                                  int64_t timeout_ms);
  // Adds / removes a library and its functions (under mutex_).
  void LinkLocked(std::unique_ptr<Library> library);
  std::unique_ptr<Library> UnlinkLocked(std::string_view name);
  void Drop(std::unique_ptr<Library> library);  // Releases its callbacks.
  void UpdateSizes();

  std::unique_ptr<LuaEngine> engine_;
  mutable std::mutex mutex_;  // Guards the maps for readers on other threads.
  LibraryMap libraries_;
  // Lower-cased function name -> its library and function.
  absl::flat_hash_map<std::string, FunctionRef> functions_;
  std::atomic<int64_t> vm_memory_{0};
  std::atomic<int64_t> overhead_{0};
};

}  // namespace gigakv::server
