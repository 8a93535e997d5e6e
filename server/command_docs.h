// COMMAND DOCS data: each command's argument syntax (Redis's usage line notation) and time
// complexity, and the conversion of a syntax line into the structured "arguments" reply that
// redis-cli 7 turns into interactive hints.
//
// Syntax grammar (a small subset of Redis's documentation notation):
//   seq   = item { " " item }
//   item  = word ["..."] | "[" alts "]" ["..."] | "{" alts "}" ["..."]
//   alts  = seq { "|" seq }            ; several alternatives make a "oneof"
//   word  = TOKEN | name               ; all-capitals words are literal tokens
// "TOKEN name" inside one seq is one argument carrying a token ("EX seconds"); "..." marks an
// argument that may repeat; [..] is optional; a seq of several items is a "block".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/reply_builder.h"

namespace gigakv::server {

struct CommandDoc {
  std::string_view name;  // Lower case, "container|sub" for subcommands.
  std::string_view syntax;
  std::string_view complexity;
};

// The rest of a command's COMMAND DOCS entry, for the commands that have any: doc flags
// (space-separated, e.g. "deprecated"), the version that deprecated it and what replaces it,
// and its history as (version, change) pairs. Redis 7.0's texts.
struct CommandDocExtras {
  std::string_view name;
  std::string_view doc_flags;
  std::string_view deprecated_since;
  std::string_view replaced_by;
  std::vector<std::pair<std::string_view, std::string_view>> history;
};

// Docs for `name`, or nullptr.
const CommandDoc* FindCommandDoc(std::string_view name);
// Extras for `name`, or nullptr when it has none.
const CommandDocExtras* FindCommandDocExtras(std::string_view name);
const std::vector<CommandDoc>& AllCommandDocs();

struct ArgumentDoc {
  std::string name;
  std::string type;  // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  int key_spec_index = -1;  // For type "key": its key spec in COMMAND INFO.
  std::string token;
  std::string since;             // Empty: not reported.
  std::string deprecated_since;  // Empty: not reported.
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;  // The token repeats with each value ("GET pattern GET pattern").
  std::vector<ArgumentDoc> arguments;
};

// Parses a syntax line; malformed input yields what could be parsed (tests keep lines valid).
// Used for the commands Redis 7.0 does not have (RedisArgumentsOf returns nullptr).
std::vector<ArgumentDoc> ParseSyntax(std::string_view syntax);

// The argument tree Redis 7.0's COMMAND DOCS reports for `name` (lower case, "container|sub"
// for a subcommand); nullptr when Redis 7.0 has no such command. Built on first use from
// RedisArgumentTreesText().
const std::vector<ArgumentDoc>* RedisArgumentsOf(std::string_view name);

// The argument-tree text (command_doc_arguments.cc, generated from redis-server's output):
//   text      = { command | argument | empty-line }
//   command   = name                       ; at column 0: the arguments below are its own
//   argument  = indent name " " type { " " attribute }
//   indent    = 2 spaces per level         ; level 1 = the command's arguments, level n + 1 =
//                                          ; the sub-arguments of the level-n line above
//   attribute = "#" digits                 ; key_spec_index
//             | "=" word                   ; token ("=*" is the token "*")
//             | "^" version                ; since
//             | "!" version                ; deprecated_since
//             | "?" | "*" | "+"            ; the flags optional, multiple, multiple_token
// Names, types and tokens never contain spaces.
std::string_view RedisArgumentTreesText();

// Parses that text into (command name, arguments) pairs, in text order. Malformed lines (an
// argument without a command, a level skipped, an unknown attribute) are errors.
absl::StatusOr<std::vector<std::pair<std::string, std::vector<ArgumentDoc>>>> ParseArgumentTrees(
    std::string_view text);

// Writes `arguments` as COMMAND DOCS does: an array of maps (name, type, token, flags, ...).
void ReplyArguments(protocol::ReplyBuilder& reply, const std::vector<ArgumentDoc>& arguments);

}  // namespace gigakv::server
