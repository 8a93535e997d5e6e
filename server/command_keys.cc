#include "server/command_keys.h"

#include <algorithm>
#include <cstdint>

#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/command.h"
#include "server/command_metadata.h"

namespace gigakv::server {
namespace {

// Commands whose keys are found from their arguments (COMMAND INFO flag "movablekeys"): a
// numkeys argument at `numkeys_index`, its keys right after it, and for the *STORE commands the
// destination first; SORT/SORT_RO are parsed on their own (the key, then a STORE destination).
struct MovableKeys {
  std::string_view command;
  int numkeys_index;  // 0 = SORT's own parsing.
  bool destination_first;
};
constexpr MovableKeys kMovableKeys[] = {
    {"zunionstore", 2, true}, {"zinterstore", 2, true}, {"zdiffstore", 2, true},
    {"zunion", 1, false},     {"zinter", 1, false},     {"zdiff", 1, false},
    {"zintercard", 1, false}, {"sintercard", 1, false}, {"lmpop", 1, false},
    {"zmpop", 1, false},      {"blmpop", 2, false},     {"bzmpop", 2, false},
    {"sort", 0, false},       {"sort_ro", 0, false},    {"eval", 2, false},
    {"eval_ro", 2, false},    {"evalsha", 2, false},    {"evalsha_ro", 2, false},
    {"fcall", 2, false},      {"fcall_ro", 2, false},
};

// Whether all the command's keys are optional (EVAL, FCALL: flag no_mandatory_keys).
bool KeysOptional(const CommandSpec& spec) {
  return std::find(spec.metadata->flags.begin(), spec.metadata->flags.end(), "no_mandatory_keys") !=
         spec.metadata->flags.end();
}

const MovableKeys* FindMovableKeys(std::string_view command) {
  for (const MovableKeys& movable : kMovableKeys) {
    if (movable.command == command) return &movable;
  }
  return nullptr;
}

// The positions in `args` (the full command, name first) of a movable-keys command's keys;
// false when its arguments do not say (numkeys not a positive integer, or more keys than
// arguments).
bool MovableKeyPositions(const MovableKeys& movable, const std::vector<std::string_view>& args,
                         std::vector<size_t>* positions, size_t* store_position) {
  if (movable.numkeys_index == 0) {  // SORT key [BY p] [LIMIT o c] [GET p]... [STORE dst]
    positions->push_back(1);
    for (size_t i = 2; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "limit")) {
        i += 2;
      } else if (EqualsIgnoreCase(args[i], "get") || EqualsIgnoreCase(args[i], "by")) {
        i += 1;
      } else if (EqualsIgnoreCase(args[i], "store") && i + 1 < args.size()) {
        *store_position = ++i;  // The last STORE wins.
      }
    }
    if (*store_position != 0) positions->push_back(*store_position);
    return true;
  }
  const auto index = static_cast<size_t>(movable.numkeys_index);
  int64_t numkeys;
  if (index >= args.size() || !ParseInt64(args[index], &numkeys) || numkeys <= 0 ||
      numkeys > static_cast<int64_t>(args.size() - index - 1)) {
    return false;
  }
  if (movable.destination_first) positions->push_back(1);
  for (int64_t i = 1; i <= numkeys; ++i) positions->push_back(index + static_cast<size_t>(i));
  return true;
}

// The access flags of SET and BITFIELD (key spec flag variable_flags) depend on their options,
// as COMMAND GETKEYSANDFLAGS reports them: SET with GET reads the key, BITFIELD with only
// GET/OVERFLOW subcommands (well formed) does not write it.
std::string_view VariableKeyFlags(std::string_view command,
                                  const std::vector<std::string_view>& args,
                                  std::string_view declared) {
  if (command == "set") {
    for (size_t i = 3; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "get")) return "RW access update";
    }
    return "OW update";
  }
  if (command == "bitfield") {
    for (size_t i = 2; i < args.size(); ++i) {
      size_t remaining = args.size() - i - 1;
      if (EqualsIgnoreCase(args[i], "get") && remaining >= 2) {
        i += 2;
      } else if (EqualsIgnoreCase(args[i], "overflow") && remaining >= 1) {
        i += 1;
      } else {
        return "RW access update";  // SET, INCRBY, or not well formed: assume a write.
      }
    }
    return "RO access";
  }
  return declared;
}

// Redis's keyword begin-search (getKeysUsingKeySpecs): the position after the first argument
// equal to the keyword (case-insensitive), searching forwards from `startfrom` (> 0) up to but
// not including the last argument, or backwards from argc + startfrom (< 0) down to 2; 0 when
// not found. GEORADIUS ... STORE dst and XREAD ... STREAMS k1 k2 id1 id2 find their keys so.
int KeywordSearch(const BeginSearch& begin, const std::vector<std::string_view>& args) {
  const int argc = static_cast<int>(args.size());
  const int start = begin.index > 0 ? begin.index : argc + begin.index;
  const int end = begin.index > 0 ? argc - 1 : 1;
  for (int i = start; i != end; i += start <= end ? 1 : -1) {
    if (i >= argc || i < 1) break;
    if (EqualsIgnoreCase(args[static_cast<size_t>(i)], begin.keyword)) return i + 1;
  }
  return 0;
}

}  // namespace

bool CommandHasKeys(const CommandSpec& spec) {
  return !spec.metadata->key_specs.empty() || FindMovableKeys(spec.name) != nullptr ||
         spec.name == "migrate";
}

bool FindKeyUses(const CommandSpec& spec, const std::vector<std::string_view>& args,
                 std::vector<KeyUse>* uses, std::string_view* error) {
  const std::vector<KeySpec>& specs = spec.metadata->key_specs;
  auto flags_of = [&](size_t i) { return i < specs.size() ? specs[i].flags : std::string_view(); };
  if (const MovableKeys* movable = FindMovableKeys(spec.name)) {
    std::vector<size_t> positions;
    size_t store_position = 0;
    if (!MovableKeyPositions(*movable, args, &positions, &store_position)) {
      if (KeysOptional(spec)) return true;  // EVAL script 0: no keys.
      *error = "ERR Invalid arguments specified for command";
      return false;
    }
    // The keys counted by numkeys carry the flags of the keynum spec; a destination or SORT's
    // key those of the first spec; SORT's STORE destination those of its last.
    std::string_view counted = flags_of(0);
    for (const KeySpec& key_spec : specs) {
      if (key_spec.find.type == FindKeys::Type::kKeynum) counted = key_spec.flags;
    }
    for (size_t position : positions) {
      std::string_view flags = counted;
      if (movable->numkeys_index == 0) {
        flags = position == store_position ? flags_of(specs.size() - 1) : flags_of(0);
      } else if (movable->destination_first && position == 1) {
        flags = flags_of(0);
      }
      uses->push_back({position, flags});
    }
    return true;
  }
  if (spec.name == "migrate") {
    // Redis's migrateGetKeys: the key argument, or with a KEYS option (found past the options
    // it skips) the keys after it; none when KEYS comes with a non-empty key (a syntax error
    // MIGRATE itself reports).
    size_t first = 3, count = 1;
    for (size_t i = 6; args.size() > 6 && i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "keys")) {
        count = args[3].empty() ? args.size() - i - 1 : 0;
        first = i + 1;
        break;
      }
      if (EqualsIgnoreCase(args[i], "auth")) i += 1;
      if (EqualsIgnoreCase(args[i], "auth2")) i += 2;
    }
    for (size_t i = 0; i < count; ++i) uses->push_back({first + i, "RW access delete"});
    if (uses->empty()) *error = "ERR Invalid arguments specified for command";
    return !uses->empty();
  }
  const int argc = static_cast<int>(args.size());
  for (const KeySpec& key_spec : specs) {
    if (key_spec.find.type != FindKeys::Type::kRange) continue;
    int first = 0;
    if (key_spec.begin.type == BeginSearch::Type::kIndex) {
      first = key_spec.begin.index;
    } else if (key_spec.begin.type == BeginSearch::Type::kKeyword) {
      first = KeywordSearch(key_spec.begin, args);
      if (first == 0) continue;  // No such keyword: the spec names no key.
    } else {
      continue;
    }
    const FindKeys& find = key_spec.find;
    int last = find.last_key >= 0 ? first + find.last_key
               : find.limit <= 1  ? argc + find.last_key
                                  : first + ((argc - first) / find.limit + find.last_key);
    std::string_view flags = VariableKeyFlags(spec.name, args, key_spec.flags);
    for (int i = first; i <= last && i < argc; i += find.key_step) {
      uses->push_back({static_cast<size_t>(i), flags});
    }
  }
  if (uses->empty()) {
    // As Redis's COMMAND GETKEYS: a command whose keys are all optional (EVAL, FCALL) has none
    // here; one that names keys but whose arguments held none was given invalid arguments.
    if (KeysOptional(spec)) return true;
    *error = specs.empty() ? "ERR The command has no key arguments"
                           : "ERR Invalid arguments specified for command";
    return false;
  }
  return true;
}

}  // namespace gigakv::server
