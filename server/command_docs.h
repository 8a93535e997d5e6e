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
  std::string token;
  bool optional = false;
  bool multiple = false;
  std::vector<ArgumentDoc> arguments;
};

// Parses a syntax line; malformed input yields what could be parsed (tests keep lines valid).
std::vector<ArgumentDoc> ParseSyntax(std::string_view syntax);

// Writes `arguments` as COMMAND DOCS does: an array of maps (name, type, token, flags, ...).
void ReplyArguments(protocol::ReplyBuilder& reply, const std::vector<ArgumentDoc>& arguments);

}  // namespace gigakv::server
