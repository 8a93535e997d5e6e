#include "server/command_metadata.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "gigakv/strings.h"

namespace gigakv::server {

// --- Commands gigakv has and Redis 7.0 does not ----------------------------------------------
// Hand-written, in the generated text's format: Redis 7.2's CLIENT SETINFO and CLIENT NO-TOUCH,
// with the arity, flags and docs gigakv has always reported for them (their argument trees
// follow their usage lines).
std::string_view GigakvCommandTableText() {
  static constexpr std::string_view kText = R"(
client|setinfo 4 noscript,loading,stale 0 0 0 @slow,@connection
  summary: Set client or connection specific info.
  since: 7.2.0
  group: connection
  complexity: O(1)
  libname-libver oneof
    libname string =LIB-NAME
    libver string =LIB-VER
client|no-touch 3 noscript,loading,stale 0 0 0 @slow,@connection
  summary: Controls whether commands sent by the client will alter the LRU/LFU of the keys they access.
  since: 7.2.0
  group: connection
  complexity: O(1)
  on-off oneof
    on pure-token =ON
    off pure-token =OFF
)";
  return kText;
}

namespace {

// Splits `text` at single spaces (empty words stay, so that doubled spaces are errors).
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  for (;;) {
    size_t space = text.find(' ');
    words.push_back(text.substr(0, space));
    if (space == std::string_view::npos) return words;
    text.remove_prefix(space + 1);
  }
}

bool ParseInt(std::string_view text, int* value) {
  return !text.empty() && std::from_chars(text.data(), text.data() + text.size(), *value).ptr ==
                              text.data() + text.size();
}

// A "list": "-" or comma-separated non-empty words.
bool ParseList(std::string_view text, std::vector<std::string_view>* list) {
  list->clear();
  if (text == "-") return true;
  for (;;) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    if (item.empty() || item.find(' ') != std::string_view::npos) return false;
    list->push_back(item);
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

// A "text": the rest of the line, unquoted.
bool ParseText(std::string_view text, std::string_view* value) {
  if (text.starts_with('"')) {
    if (text.size() < 2 || !text.ends_with('"')) return false;
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty()) return false;
  *value = text;
  return true;
}

bool ParseWord(std::string_view text, std::string_view* value) {
  if (text.empty() || text.find_first_of(" ,") != std::string_view::npos) return false;
  *value = text;
  return true;
}

// "flags begin find [notes]".
bool ParseKeySpec(std::string_view text, KeySpec* spec) {
  std::vector<std::string_view> words = Words(text);
  std::vector<std::string_view> flags;
  if (words.empty() || !ParseList(words[0], &flags) || flags.empty()) return false;
  for (std::string_view flag : flags) StrAppend(&spec->flags, spec->flags.empty() ? "" : " ", flag);
  size_t i = 1;
  auto next = [&]() -> std::string_view { return i < words.size() ? words[i++] : ""; };
  std::string_view begin = next();
  if (begin == "index") {
    spec->begin.type = BeginSearch::Type::kIndex;
    if (!ParseInt(next(), &spec->begin.index)) return false;
  } else if (begin == "keyword") {
    spec->begin.type = BeginSearch::Type::kKeyword;
    if (!ParseWord(next(), &spec->begin.keyword) || !ParseInt(next(), &spec->begin.index)) {
      return false;
    }
  } else if (begin != "unknown") {
    return false;
  }
  std::string_view find = next();
  FindKeys& keys = spec->find;
  if (find == "range") {
    keys.type = FindKeys::Type::kRange;
    if (!ParseInt(next(), &keys.last_key) || !ParseInt(next(), &keys.key_step) ||
        !ParseInt(next(), &keys.limit)) {
      return false;
    }
  } else if (find == "keynum") {
    keys.type = FindKeys::Type::kKeynum;
    if (!ParseInt(next(), &keys.keynum_index) || !ParseInt(next(), &keys.first_key) ||
        !ParseInt(next(), &keys.key_step)) {
      return false;
    }
  } else if (find != "unknown") {
    return false;
  }
  if (i == words.size()) return true;
  // The notes: the rest of the line, after the words consumed so far.
  size_t consumed = 0;
  for (size_t w = 0; w < i; ++w) consumed += words[w].size() + 1;
  return ParseText(text.substr(consumed), &spec->notes);
}

// An argument line's words after its name and type.
bool ParseArgumentAttribute(std::string_view word, ArgumentDoc* argument) {
  if (word.empty()) return false;
  std::string_view value = word.substr(1);
  switch (word[0]) {
    case '#':
      return ParseInt(value, &argument->key_spec_index) && argument->key_spec_index >= 0;
    case '=':
      argument->token = std::string(value);
      return true;
    case '^':
      argument->since = std::string(value);
      return !value.empty();
    case '!':
      argument->deprecated_since = std::string(value);
      return !value.empty();
    case '?':
    case '*':
    case '+':
      if (!value.empty()) return false;
      (word[0] == '?'   ? argument->optional
       : word[0] == '*' ? argument->multiple
                        : argument->multiple_token) = true;
      return true;
    default:
      return false;
  }
}

// A field line ("tag: value") of `command`; an error text, empty when it parsed.
std::string ParseField(std::string_view tag, std::string_view value, CommandMetadata* command) {
  bool ok;
  if (tag == "tips") {
    ok = ParseList(value, &command->tips);
  } else if (tag == "key_spec") {
    ok = ParseKeySpec(value, &command->key_specs.emplace_back());
  } else if (tag == "summary") {
    ok = ParseText(value, &command->summary);
  } else if (tag == "since") {
    ok = ParseWord(value, &command->since);
  } else if (tag == "group") {
    ok = ParseWord(value, &command->group);
  } else if (tag == "complexity") {
    ok = ParseText(value, &command->complexity);
  } else if (tag == "doc_flags") {
    ok = ParseList(value, &command->doc_flags);
  } else if (tag == "deprecated_since") {
    ok = ParseWord(value, &command->deprecated_since);
  } else if (tag == "replaced_by") {
    ok = ParseText(value, &command->replaced_by);
  } else if (tag == "history") {
    size_t space = value.find(' ');
    auto& [version, change] = command->history.emplace_back();
    ok = space != std::string_view::npos && ParseWord(value.substr(0, space), &version) &&
         ParseText(value.substr(space + 1), &change);
  } else {
    return StrCat("unknown field ", tag);
  }
  return ok ? "" : StrCat("bad ", tag);
}

// The header line: name arity flags first last step categories.
bool ParseHeader(std::string_view line, CommandMetadata* command) {
  std::vector<std::string_view> words = Words(line);
  return words.size() == 7 && ParseWord(words[0], &command->name) &&
         ParseInt(words[1], &command->arity) && ParseList(words[2], &command->flags) &&
         ParseInt(words[3], &command->first_key) && ParseInt(words[4], &command->last_key) &&
         ParseInt(words[5], &command->key_step) && ParseList(words[6], &command->acl_categories);
}

}  // namespace

absl::StatusOr<std::vector<CommandMetadata>> ParseCommandTable(std::string_view text) {
  std::vector<CommandMetadata> commands;
  // open[l] is the argument list that level-(l + 1) argument lines append to.
  std::vector<std::vector<ArgumentDoc>*> open;
  int line_number = 0;
  int entry_line = 0;
  auto check_entry = [&]() -> absl::Status {
    if (commands.empty()) return absl::OkStatus();
    const CommandMetadata& last = commands.back();
    if (last.summary.empty() || last.since.empty() || last.group.empty()) {
      return absl::InvalidArgumentError(
          StrCat("line ", entry_line, ": ", last.name, " lacks summary, since or group"));
    }
    return absl::OkStatus();
  };
  while (!text.empty()) {
    size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    if (line.empty()) continue;
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(StrCat("line ", line_number, ": ", what));
    };
    size_t spaces = line.find_first_not_of(' ');
    if (spaces == std::string_view::npos || spaces % 2 != 0) return error("bad indentation");
    size_t level = spaces / 2;
    line.remove_prefix(spaces);
    if (level == 0) {
      if (absl::Status status = check_entry(); !status.ok()) return status;
      CommandMetadata& command = commands.emplace_back();
      if (!ParseHeader(line, &command)) return error("bad command header");
      open.assign(1, &command.arguments);
      entry_line = line_number;
      continue;
    }
    if (commands.empty()) return error("a line without a command");
    CommandMetadata& command = commands.back();
    size_t space = line.find(' ');
    std::string_view first = line.substr(0, space);
    if (level == 1 && first.ends_with(':')) {
      if (!command.arguments.empty()) return error("a field after the arguments");
      if (space == std::string_view::npos) return error("a field without a value");
      std::string field_error =
          ParseField(first.substr(0, first.size() - 1), line.substr(space + 1), &command);
      if (!field_error.empty()) return error(field_error);
      continue;
    }
    if (level > open.size()) return error("argument without a parent");
    std::vector<std::string_view> words = Words(line);
    if (words.size() < 2 || words[0].empty() || words[1].empty()) {
      return error("an argument needs a name and a type");
    }
    ArgumentDoc argument;
    argument.name = std::string(words[0]);
    argument.type = std::string(words[1]);
    for (size_t i = 2; i < words.size(); ++i) {
      if (!ParseArgumentAttribute(words[i], &argument)) {
        return error(StrCat("bad attribute ", words[i]));
      }
    }
    open.resize(level);  // Closes the deeper levels.
    std::vector<ArgumentDoc>* siblings = open.back();
    siblings->push_back(std::move(argument));
    open.push_back(&siblings->back().arguments);
  }
  if (absl::Status status = check_entry(); !status.ok()) return status;
  return commands;
}

const CommandMetadata* FindCommandMetadata(std::string_view name) {
  // Built once, never freed; the index points into `all`, so both stay reachable.
  struct Tables {
    std::vector<CommandMetadata> all;
    std::map<std::string_view, const CommandMetadata*, std::less<>> index;
  };
  static const Tables* tables = [] {
    auto* built = new Tables();
    std::vector<CommandMetadata>* all = &built->all;
    auto* map = &built->index;
    for (std::string_view text : {RedisCommandTableText(), GigakvCommandTableText()}) {
      auto parsed = ParseCommandTable(text);
      // The texts are checked by tests: a parse error is a build defect.
      if (!parsed.ok()) {
        std::fprintf(stderr, "command table: %s\n", parsed.status().ToString().c_str());
        std::abort();
      }
      for (CommandMetadata& command : *parsed) all->push_back(std::move(command));
    }
    for (const CommandMetadata& command : *all) {
      if (!map->emplace(command.name, &command).second) {
        std::fprintf(stderr, "command table: %.*s twice\n", static_cast<int>(command.name.size()),
                     command.name.data());
        std::abort();
      }
    }
    return built;
  }();
  auto it = tables->index.find(name);
  return it == tables->index.end() ? nullptr : it->second;
}

void ReplyArguments(protocol::ReplyBuilder& reply, const std::vector<ArgumentDoc>& arguments) {
  reply.ArrayHeader(static_cast<int64_t>(arguments.size()));
  // Fields in Redis 7.0's order; absent ones are left out.
  for (const ArgumentDoc& argument : arguments) {
    int64_t flags = (argument.optional ? 1 : 0) + (argument.multiple ? 1 : 0) +
                    (argument.multiple_token ? 1 : 0);
    int64_t fields = 2 + (argument.key_spec_index >= 0 ? 1 : 0) + (argument.token ? 1 : 0) +
                     (argument.since.empty() ? 0 : 1) +
                     (argument.deprecated_since.empty() ? 0 : 1) + (flags > 0 ? 1 : 0) +
                     (argument.arguments.empty() ? 0 : 1);
    reply.MapHeader(fields);
    reply.Bulk("name");
    reply.Bulk(argument.name);
    reply.Bulk("type");
    reply.Bulk(argument.type);
    if (argument.key_spec_index >= 0) {
      reply.Bulk("key_spec_index");
      reply.Integer(argument.key_spec_index);
    }
    if (argument.token) {
      reply.Bulk("token");
      reply.Bulk(*argument.token);
    }
    if (!argument.since.empty()) {
      reply.Bulk("since");
      reply.Bulk(argument.since);
    }
    if (!argument.deprecated_since.empty()) {
      reply.Bulk("deprecated_since");
      reply.Bulk(argument.deprecated_since);
    }
    if (flags > 0) {
      reply.Bulk("flags");
      reply.SetHeader(flags);
      if (argument.optional) reply.SimpleString("optional");
      if (argument.multiple) reply.SimpleString("multiple");
      if (argument.multiple_token) reply.SimpleString("multiple_token");
    }
    if (!argument.arguments.empty()) {
      reply.Bulk("arguments");
      ReplyArguments(reply, argument.arguments);
    }
  }
}

}  // namespace gigakv::server
