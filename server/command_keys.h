// Where a command's keys are among its arguments, found as Redis 7.0's getKeysFromCommand finds
// them: a movable-keys command (ZUNIONSTORE, LMPOP, SORT...) parses its arguments, MIGRATE has
// its own rule, any other follows its key specs (command_metadata.h). Used by COMMAND GETKEYS /
// GETKEYSANDFLAGS and by client-side caching (server/tracking.h), which remembers the keys a
// read-only command read. Pure functions of the arguments; any thread.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace gigakv::server {

struct CommandSpec;

struct KeyUse {
  size_t position;         // In the full command's arguments.
  std::string_view flags;  // Space-separated key spec flags ("RW access update").
};

// Whether the command can take keys at all (Redis's doesCommandHaveKeys): key specs, or keys
// found by code.
bool CommandHasKeys(const CommandSpec& spec);

// Where the keys of the full command `args` (name first) are and how it uses them. False with
// `*error` set (the COMMAND GETKEYS error text) when there are none, except for a command whose
// keys are all optional (no_mandatory_keys: EVAL, FCALL), which may have none. O(arguments).
bool FindKeyUses(const CommandSpec& spec, const std::vector<std::string_view>& args,
                 std::vector<KeyUse>* uses, std::string_view* error);

}  // namespace gigakv::server
