#include "server/functions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/rdb/rdb_io.h"
#include "protocol/request_parser.h"

namespace gigakv::server {
namespace {

constexpr std::string_view kBadName =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least "
    "one character long";

absl::Status Failure(std::string_view text) { return absl::InvalidArgumentError(ToAbsl(text)); }

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string Lower(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return lower;
}

using Metadata = FunctionLibraries::Metadata;

// A library's first line (Redis's functionExtractLibMetaData): `#!<engine> name=<name>`, split
// as redis-cli splits a line (quotes allowed); checked in Redis's order: the line's syntax, the
// name, the engine (Lua only).
absl::StatusOr<Metadata> ParseMetadata(std::string_view code) {
  Metadata metadata;
  if (!code.starts_with("#!")) return Failure("ERR Missing library metadata");
  const size_t end = code.find('\n');
  if (end == std::string_view::npos) return Failure("ERR Invalid library metadata");
  std::vector<std::string> parts;
  if (!protocol::SplitInlineArgs(code.substr(0, end), &parts) || parts.empty()) {
    return Failure("ERR Invalid library metadata");
  }
  metadata.engine = parts[0].substr(std::min<size_t>(2, parts[0].size()));
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() >= 5 &&
        EqualsIgnoreCase(std::string_view(parts[i]).substr(0, 5), "name=")) {
      if (named) {
        return Failure("ERR Invalid metadata value, name argument was given multiple times");
      }
      metadata.name = parts[i].substr(5);
      named = true;
      continue;
    }
    return Failure(StrCat("ERR Invalid metadata value given: ", parts[i]));
  }
  if (!named) return Failure("ERR Library name was not given");
  metadata.body_at = end;
  if (!ValidName(metadata.name)) return Failure(kBadName);
  if (!EqualsIgnoreCase(metadata.engine, "lua")) {
    return Failure(StrCat("ERR Engine '", metadata.engine, "' not found"));
  }
  return metadata;
}

}  // namespace

FunctionLibraries::FunctionLibraries() = default;

FunctionLibraries::~FunctionLibraries() {
  // The callbacks die with the Lua state.
  libraries_.clear();
  engine_.reset();
}

LuaEngine& FunctionLibraries::engine() {
  if (engine_ == nullptr) engine_ = std::make_unique<LuaEngine>(0, LuaEngine::Kind::kFunctions);
  return *engine_;
}

absl::StatusOr<std::unique_ptr<FunctionLibraries::Library>> FunctionLibraries::Create(
    std::string_view code, const Metadata& metadata, int64_t timeout_ms) {
  auto library = std::make_unique<Library>();
  library->name = metadata.name;
  library->code = std::string(code);
  std::string error;
  if (!engine().LoadLibrary(code.substr(metadata.body_at), timeout_ms, &library->functions,
                            &error)) {
    return Failure(StrCat("ERR ", error));
  }
  if (library->functions.empty()) return Failure("ERR No functions registered");
  return library;
}

void FunctionLibraries::LinkLocked(std::unique_ptr<Library> library) {
  for (const RegisteredFunction& function : library->functions) {
    functions_[Lower(function.name)] = FunctionRef{library.get(), &function};
  }
  std::string name = library->name;
  libraries_.emplace(std::move(name), std::move(library));
}

std::unique_ptr<FunctionLibraries::Library> FunctionLibraries::UnlinkLocked(std::string_view name) {
  auto it = libraries_.find(name);
  if (it == libraries_.end()) return nullptr;
  std::unique_ptr<Library> library = std::move(it->second);
  libraries_.erase(it);
  for (const RegisteredFunction& function : library->functions) {
    functions_.erase(Lower(function.name));
  }
  return library;
}

void FunctionLibraries::Drop(std::unique_ptr<Library> library) {
  if (library != nullptr && engine_ != nullptr) engine_->Release(library->functions);
}

void FunctionLibraries::UpdateSizes() {
  int64_t overhead = 0;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, library] : libraries_) {
      overhead += static_cast<int64_t>(sizeof(Library) + name.size() + library->code.size());
      for (const RegisteredFunction& function : library->functions) {
        overhead += static_cast<int64_t>(sizeof(RegisteredFunction) + function.name.size() +
                                         function.description.value_or("").size());
      }
    }
  }
  overhead_.store(overhead, std::memory_order_relaxed);
  vm_memory_.store(engine_ == nullptr ? 0 : static_cast<int64_t>(engine_->memory_bytes()),
                   std::memory_order_relaxed);
}

absl::StatusOr<std::string> FunctionLibraries::Load(std::string_view code, bool replace,
                                                    int64_t timeout_ms) {
  // The checks in Redis's order: first line, name, engine, an existing library, the code, a
  // function of another library with one of its names.
  absl::StatusOr<Metadata> metadata = ParseMetadata(code);
  if (!metadata.ok()) return metadata.status();
  auto existing = libraries_.find(metadata->name);
  const Library* old = existing == libraries_.end() ? nullptr : existing->second.get();
  if (old != nullptr && !replace) {
    return Failure(StrCat("ERR Library '", metadata->name, "' already exists"));
  }
  absl::StatusOr<std::unique_ptr<Library>> library = Create(code, *metadata, timeout_ms);
  if (!library.ok()) return library.status();
  for (const RegisteredFunction& function : (*library)->functions) {
    auto other = functions_.find(Lower(function.name));
    if (other != functions_.end() && other->second.library != old) {
      const std::string error = StrCat("ERR Function ", function.name, " already exists");
      Drop(*std::move(library));
      return Failure(error);
    }
  }
  std::string name = (*library)->name;
  std::unique_ptr<Library> replaced;
  {
    std::lock_guard lock(mutex_);
    if (old != nullptr) replaced = UnlinkLocked(name);
    LinkLocked(*std::move(library));
  }
  Drop(std::move(replaced));
  UpdateSizes();
  return name;
}

bool FunctionLibraries::Delete(std::string_view name) {
  std::unique_ptr<Library> library;
  {
    std::lock_guard lock(mutex_);
    library = UnlinkLocked(name);
  }
  if (library == nullptr) return false;
  Drop(std::move(library));
  UpdateSizes();
  return true;
}

void FunctionLibraries::Flush() {
  {
    std::lock_guard lock(mutex_);
    functions_.clear();
    libraries_.clear();
  }
  engine_.reset();  // Its callbacks and whatever state the libraries kept go with it.
  UpdateSizes();
}

absl::Status FunctionLibraries::Restore(std::string_view payload, RestorePolicy policy) {
  namespace rdb = persistence::rdb;
  std::string_view items;
  if (!rdb::VerifyDumpPayload(payload, &items).ok()) {
    return Failure("ERR DUMP payload version or checksum are wrong");
  }
  // The payload's libraries, loaded apart first (Redis loads them into a new context).
  std::vector<std::unique_ptr<Library>> staged;
  auto drop_staged = [&] {
    for (std::unique_ptr<Library>& library : staged) Drop(std::move(library));
  };
  absl::flat_hash_map<std::string, const Library*> staged_functions;
  rdb::RdbReader reader(items);
  while (reader.offset() < items.size()) {
    absl::StatusOr<uint8_t> type = reader.ReadByte();
    if (!type.ok()) {
      drop_staged();
      return Failure("ERR can not read data type");
    }
    std::string code;
    if (*type == rdb::kOpFunction2) {
      if (!reader.ReadString(&code).ok()) {
        drop_staged();
        return Failure("ERR Failed loading library payload");
      }
    } else if (*type == rdb::kOpFunction) {
      // Redis 7.0's release candidates: name, engine, an optional description, the code.
      std::string name, engine_name, description, blob;
      absl::StatusOr<uint64_t> has_description;
      if (!reader.ReadString(&name).ok() || !reader.ReadString(&engine_name).ok() ||
          !(has_description = reader.ReadLength()).ok() ||
          (*has_description != 0 && !reader.ReadString(&description).ok()) ||
          !reader.ReadString(&blob).ok()) {
        drop_staged();
        return Failure("ERR failed loading the given functions payload");
      }
      code = StrCat("#!", engine_name, " name=", name, "\n", blob);
    } else {
      drop_staged();
      return Failure("ERR given type is not a function");
    }
    absl::StatusOr<Metadata> metadata = ParseMetadata(code);
    if (!metadata.ok()) {
      drop_staged();
      return metadata.status();
    }
    for (const std::unique_ptr<Library>& library : staged) {
      if (library->name == metadata->name) {
        drop_staged();
        return Failure(StrCat("ERR Library '", metadata->name, "' already exists"));
      }
    }
    absl::StatusOr<std::unique_ptr<Library>> library = Create(code, *metadata, /*timeout_ms=*/0);
    if (!library.ok()) {
      drop_staged();
      return library.status();
    }
    for (const RegisteredFunction& function : (*library)->functions) {
      if (!staged_functions.emplace(Lower(function.name), library->get()).second) {
        const std::string error = StrCat("ERR Function ", function.name, " already exists");
        Drop(*std::move(library));
        drop_staged();
        return Failure(error);
      }
    }
    staged.push_back(*std::move(library));
  }

  std::vector<std::unique_ptr<Library>> dropped;
  std::string error;
  {
    std::lock_guard lock(mutex_);
    if (policy == RestorePolicy::kFlush) {
      for (auto& [name, library] : libraries_) dropped.push_back(std::move(library));
      libraries_.clear();
      functions_.clear();
    } else {
      // Redis's libraryJoin: a library of the same name is an error, or replaced (REPLACE);
      // then no function may have the name of one in a library that stays.
      std::vector<std::string_view> replaced;
      for (const std::unique_ptr<Library>& library : staged) {
        if (!libraries_.contains(library->name)) continue;
        if (policy != RestorePolicy::kReplace) {
          error = StrCat("ERR Library ", library->name, " already exists");
          break;
        }
        replaced.push_back(library->name);
      }
      for (size_t i = 0; error.empty() && i < staged.size(); ++i) {
        for (const RegisteredFunction& function : staged[i]->functions) {
          auto other = functions_.find(Lower(function.name));
          if (other == functions_.end()) continue;
          const std::string_view owner = other->second.library->name;
          if (std::find(replaced.begin(), replaced.end(), owner) == replaced.end()) {
            error = StrCat("ERR Function ", function.name, " already exists");
            break;
          }
        }
      }
      if (error.empty()) {
        for (std::string_view name : replaced) dropped.push_back(UnlinkLocked(name));
      }
    }
    if (error.empty()) {
      for (std::unique_ptr<Library>& library : staged) LinkLocked(std::move(library));
    }
  }
  if (!error.empty()) {
    drop_staged();
    return Failure(error);
  }
  for (std::unique_ptr<Library>& library : dropped) Drop(std::move(library));
  UpdateSizes();
  return absl::OkStatus();
}

std::string FunctionLibraries::Dump(bool compress) const {
  namespace rdb = persistence::rdb;
  std::string payload;
  rdb::RdbWriter writer(
      [&payload](std::string_view bytes) {
        payload.append(bytes);
        return absl::OkStatus();
      },
      rdb::RdbWriter::Options{.compress = compress});
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, library] : libraries_) {
      writer.WriteByte(rdb::kOpFunction2);
      writer.WriteString(library->code);
    }
  }
  writer.FinishPayload().IgnoreError();  // An in-memory sink never fails.
  return payload;
}

bool FunctionLibraries::Find(std::string_view name, FunctionRef* out) const {
  std::lock_guard lock(mutex_);
  auto it = functions_.find(Lower(name));
  if (it == functions_.end()) return false;
  *out = it->second;
  return true;
}

void FunctionLibraries::ForEachLibrary(const std::function<void(const Library&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, library] : libraries_) visit(*library);
}

std::vector<std::string> FunctionLibraries::Codes() const {
  std::vector<std::string> codes;
  std::lock_guard lock(mutex_);
  codes.reserve(libraries_.size());
  for (const auto& [name, library] : libraries_) codes.push_back(library->code);
  return codes;
}

size_t FunctionLibraries::library_count() const {
  std::lock_guard lock(mutex_);
  return libraries_.size();
}

size_t FunctionLibraries::function_count() const {
  std::lock_guard lock(mutex_);
  return functions_.size();
}

}  // namespace gigakv::server
