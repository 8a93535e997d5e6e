// Every command's Redis-defined metadata, from one source: what COMMAND INFO and COMMAND DOCS
// report (arity, flags, key positions, ACL categories, tips, key specs, summary, since, group,
// complexity, doc flags, deprecation, history, argument tree). Redis 7.0's commands come from
// RedisCommandTableText() (redis_command_table.cc, generated from redis-server by
// scripts/gen-command-table.py); the few commands gigakv has and Redis 7.0 lacks from
// GigakvCommandTableText() (command_metadata.cc, hand-written). Both texts are parsed once, on
// first use; the command table (command_table.cc) copies what the dispatcher reads into plain
// CommandSpec fields when it is built.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/reply_builder.h"

namespace gigakv::server {

// A key spec says where a command's keys are and how it uses them:
//   begin_search  index N        the search starts at argument N (the command name is 0);
//                 keyword K S    ... right after the keyword K, searched from argument S on
//                                (S < 0: from the end, backwards);
//                 unknown        the keys cannot be found from the spec (SORT's BY/GET/STORE);
//   find_keys     range L S M    keys from there to L (L >= 0: that many arguments further;
//                                L < 0: counted from the end, -1 = last), every S-th; M limits
//                                a -1 range to 1/M of the remaining arguments (0 = no limit);
//                 keynum K F S   the argument K after the start holds the number of keys, the
//                                first of which is F after the start, every S-th;
//                 unknown.
struct BeginSearch {
  enum class Type { kIndex, kKeyword, kUnknown };
  Type type = Type::kUnknown;
  int index = 0;             // kIndex: the index; kKeyword: startfrom.
  std::string_view keyword;  // kKeyword
};

struct FindKeys {
  enum class Type { kRange, kKeynum, kUnknown };
  Type type = Type::kUnknown;
  int last_key = 0;      // kRange
  int key_step = 1;      // kRange and kKeynum
  int limit = 0;         // kRange
  int keynum_index = 0;  // kKeynum
  int first_key = 0;     // kKeynum
};

struct KeySpec {
  // Space-separated, as Redis prints them: the first (RW, RO, OW, RM) in capitals, then the
  // access details ("RW access update").
  std::string flags;
  BeginSearch begin;
  FindKeys find;
  std::string_view notes;  // Empty: no "notes" field.
};

struct ArgumentDoc {
  std::string name;
  std::string type;  // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  int key_spec_index = -1;           // For type "key": its key spec in COMMAND INFO.
  std::optional<std::string> token;  // May be empty (MIGRATE's empty_string).
  std::string since;                 // Empty: not reported.
  std::string deprecated_since;      // Empty: not reported.
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;  // The token repeats with each value ("GET pattern GET pattern").
  std::vector<ArgumentDoc> arguments;
};

// One command's COMMAND INFO and COMMAND DOCS fields, in Redis's words and order. Views point
// into the parsed text. Optional text fields are empty when Redis does not report them.
struct CommandMetadata {
  std::string_view name;                // Lower case; "container|sub" for a subcommand.
  int arity = 0;                        // N exact, -N at least N (name included).
  std::vector<std::string_view> flags;  // "write", "denyoom", "movablekeys"...
  int first_key = 0;                    // 0 = no keys.
  int last_key = 0;                     // -1 = last argument.
  int key_step = 0;
  std::vector<std::string_view> acl_categories;  // "@write", "@string"...
  std::vector<std::string_view> tips;            // "nondeterministic_output"...
  std::vector<KeySpec> key_specs;
  std::string_view summary;
  std::string_view since;
  std::string_view group;  // "string", "generic", "server"...
  std::string_view complexity;
  std::vector<std::string_view> doc_flags;  // "deprecated", "syscmd"
  std::string_view deprecated_since;
  std::string_view replaced_by;
  std::vector<std::pair<std::string_view, std::string_view>> history;  // (version, change)
  std::vector<ArgumentDoc> arguments;
};

// The metadata of `name` (lower case, "container|sub" for a subcommand), or nullptr. The first
// call parses both texts; a parse error or a command in both aborts (a build defect: tests parse
// them).
const CommandMetadata* FindCommandMetadata(std::string_view name);

// The command table text:
//   text       = { entry | empty-line }
//   entry      = header { field } { argument }    ; the fields come before the arguments
//   header     = name " " arity " " list " " first " " last " " step " " list
//                                                ; at column 0: COMMAND INFO's name, arity,
//                                                ; flags, first/last key, key step and ACL
//                                                ; categories
//   list       = "-" | word { "," word }         ; "-" is the empty list
//   field      = "  " tag ": " value             ; tags are the reply's field names:
//              | "  tips: " list
//              | "  key_spec: " list " " begin " " find [ " " text ]   ; flags ... notes
//              | "  summary: " text | "  since: " word | "  group: " word
//              | "  complexity: " text | "  doc_flags: " list | "  deprecated_since: " word
//              | "  replaced_by: " text
//              | "  history: " word " " text     ; one line per entry, in order
//   begin      = "index " int | "keyword " word " " int | "unknown"
//   find       = "range " int " " int " " int    ; lastkey keystep limit
//              | "keynum " int " " int " " int   ; keynumidx firstkey keystep
//              | "unknown"
//   text       = the rest of the line, in double quotes when it starts or ends with a space or
//                starts with a quote
//   argument   = indent name " " type { " " attribute }
//   indent     = 2 spaces per level              ; level 1 = the command's arguments, level
//                                                ; n + 1 = the sub-arguments of the level-n line
//                                                ; above
//   attribute  = "#" digits                      ; key_spec_index
//              | "=" [word]                      ; token ("=*" is the token "*", "=" the empty
//                                                ; token)
//              | "^" version                     ; since
//              | "!" version                     ; deprecated_since
//              | "?" | "*" | "+"                 ; the flags optional, multiple, multiple_token
// Words, names, types and tokens never contain spaces; a level-1 line whose first word ends in
// ":" is a field (no argument name does). summary, since and group are required.
std::string_view RedisCommandTableText();   // redis_command_table.cc, generated.
std::string_view GigakvCommandTableText();  // command_metadata.cc: what Redis 7.0 lacks.

// Parses a command table text into its entries, in text order; views point into `text`, which
// must outlive them. Malformed lines (an argument without a command, a level skipped, an unknown
// field or attribute, a bad number, a missing required field) are errors naming the line.
absl::StatusOr<std::vector<CommandMetadata>> ParseCommandTable(std::string_view text);

// Writes `arguments` as COMMAND DOCS does: an array of maps (name, type, token, flags, ...).
void ReplyArguments(protocol::ReplyBuilder& reply, const std::vector<ArgumentDoc>& arguments);

}  // namespace gigakv::server
