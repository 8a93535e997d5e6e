// SORT and SORT_RO: sort the elements of a list, set or sorted set, numerically or (ALPHA)
// byte-wise, optionally by the values of other keys (BY pattern), returning other keys' values
// (GET pattern), a LIMIT window, or storing the result as a list (STORE, SORT only).
//
// Semantics follow Redis 7.0's sortCommandGeneric: options are parsed first (the last ASC/DESC
// wins, LIMIT's integers are checked as they come), then the key is looked up (WRONGTYPE for
// other types; a missing key sorts as an empty list). BY without '*' means "don't sort": lists
// and sorted sets keep their order (reversed by DESC), sets their iteration order; but a set
// sorted with STORE is sorted ALPHA so the stored list is deterministic. Numeric sort breaks ties
// by comparing the elements, so equal scores give a stable order; a value that is not a number
// fails the whole command with "One or more scores can't be converted into double". Missing BY
// values count as 0 (numeric) or sort first (ALPHA).
//
// Locking: the elements are copied out under the sorted key's lock; every BY/GET lookup then
// locks its own key, and STORE the destination's. With BY, GET or STORE the whole command runs
// under the transaction gate's exclusive scope (server/transaction.h), as EXEC does, so it is
// atomic with respect to every other client, as in single-threaded Redis.
//
// Effects: SORT ... STORE logs the stored result as DEL dst + RPUSH dst elements (or DEL alone
// when the result is empty), which replays to the same list whatever the other keys held.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/types/hash.h"
#include "core/types/quicklist.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/settings.h"
#include "server/transaction.h"

namespace gigakv::server {
namespace {

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dont_sort = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> by;
  std::vector<std::string_view> gets;
  std::optional<std::string_view> store;
};

// Parses SORT's options (argv[2...]) in Redis's order; false when an error reply was sent.
bool ParseSortOptions(CommandContext& ctx, bool readonly, SortOptions* options) {
  for (size_t j = 2; j < ctx.argc(); ++j) {
    size_t left = ctx.argc() - j - 1;
    std::string_view word = ctx.arg(j);
    if (ArgIs(word, "asc")) {
      options->desc = false;
    } else if (ArgIs(word, "desc")) {
      options->desc = true;
    } else if (ArgIs(word, "alpha")) {
      options->alpha = true;
    } else if (ArgIs(word, "limit") && left >= 2) {
      if (!ParseIntOrReply(ctx, ctx.arg(j + 1), &options->limit_start) ||
          !ParseIntOrReply(ctx, ctx.arg(j + 2), &options->limit_count)) {
        return false;
      }
      j += 2;
    } else if (!readonly && ArgIs(word, "store") && left >= 1) {
      options->store = ctx.arg(++j);
    } else if (ArgIs(word, "by") && left >= 1) {
      options->by = ctx.arg(++j);
      // Redis looks for '*' with strchr, which stops at a NUL byte.
      std::string_view pattern = options->by->substr(0, options->by->find('\0'));
      options->dont_sort = pattern.find('*') == std::string_view::npos;
    } else if (ArgIs(word, "get") && left >= 1) {
      options->gets.push_back(ctx.arg(++j));
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// Redis's lookupKeyByPattern: "#" is the element itself; otherwise the first '*' is replaced by
// the element, and a "->field" suffix (after the '*') reads a hash field instead of a string.
// nullopt when the pattern has no '*', the key is missing or of the wrong type, or the field is
// missing.
std::optional<std::string> LookupByPattern(CommandContext& ctx, std::string_view pattern,
                                           std::string_view element) {
  if (pattern == "#") return std::string(element);
  pattern = pattern.substr(0, pattern.find('\0'));  // Redis handles patterns as C strings.
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  std::string_view field;
  std::string_view postfix = pattern.substr(star + 1);
  size_t arrow = postfix.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < postfix.size()) {
    field = postfix.substr(arrow + 2);
    postfix = postfix.substr(0, arrow);
  }
  std::string key = StrCat(pattern.substr(0, star), element, postfix);
  return WithKey(ctx, key, Lookup::kRead, [&](KeyAccess& access) -> std::optional<std::string> {
    if (!access.exists()) return std::nullopt;
    RecordView view = access.view();
    if (field.empty()) {
      if (!view.is_string()) return std::nullopt;
      return std::string(view.str);
    }
    if (view.type() != KeyType::kHash) return std::nullopt;
    std::string scratch;
    std::optional<std::string_view> value =
        static_cast<const Hash*>(ObjectForRead(view))->Get(field, &scratch);
    if (!value.has_value()) return std::nullopt;
    return std::string(*value);
  });
}

// strtod over the whole text, as Redis parses numeric sort weights; false when not a number.
bool ParseSortScore(const std::string& text, double* score) {
  errno = 0;
  char* end = nullptr;
  *score = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*score);
}

struct SortItem {
  std::string element;
  double score = 0;
  std::optional<std::string> compare_by;  // ALPHA with BY: the value sorted on.
};

// Byte-wise comparison (Redis's compareStringObjects / strcoll in the C locale).
int CompareBytes(std::string_view a, std::string_view b) { return a.compare(b); }

void SortGeneric(CommandContext& ctx, bool readonly) {
  SortOptions options;
  if (!ParseSortOptions(ctx, readonly, &options)) return;
  // BY and GET read other keys and STORE writes one: as in Redis, the whole SORT is then one
  // atomic step, so no other I/O thread runs a command meanwhile (transaction.h). Inside EXEC
  // that already holds.
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if ((options.by.has_value() || !options.gets.empty() || options.store.has_value()) &&
      !TransactionGate::ThisThreadIsExclusive()) {
    exclusive.emplace(ctx.transaction_gate());
  }

  // Load the elements in their natural order (lists head to tail, sorted sets by score).
  std::optional<KeyType> type;
  std::vector<SortItem> items;
  bool wrong_type = false;
  // A read lookup, also with STORE (as in Redis 7.0).
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) return;
    RecordView view = access.view();
    KeyType key_type = view.type();
    if (key_type != KeyType::kList && key_type != KeyType::kSet && key_type != KeyType::kZSet) {
      wrong_type = true;
      return;
    }
    type = key_type;
    const Object* object = ObjectForRead(view);
    items.reserve(object->Length());
    object->ForEachElement([&](std::string_view element) {
      items.push_back(SortItem{std::string(element), 0, std::nullopt});
    });
  });
  if (wrong_type) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  if (!type.has_value()) type = KeyType::kList;  // A missing key sorts as an empty list.

  // A set has no order of its own: when storing, sort it so the stored list is deterministic.
  if (options.dont_sort && *type == KeyType::kSet && options.store.has_value()) {
    options.dont_sort = false;
    options.alpha = true;
    options.by.reset();
  }

  auto length = static_cast<int64_t>(items.size());
  int64_t start = options.limit_start < 0 ? 0 : options.limit_start;
  int64_t end = options.limit_count < 0 ? length - 1 : start + options.limit_count - 1;
  if (start >= length) {
    start = length - 1;
    end = length - 2;
  }
  if (end >= length) end = length - 1;

  if (options.dont_sort) {
    if (options.desc && *type != KeyType::kSet) std::reverse(items.begin(), items.end());
  } else {
    bool conversion_error = false;
    for (SortItem& item : items) {
      std::optional<std::string> by_value;
      if (options.by.has_value()) {
        by_value = LookupByPattern(ctx, *options.by, item.element);
        if (!by_value.has_value()) continue;
      }
      if (options.alpha) {
        if (options.by.has_value()) item.compare_by = std::move(by_value);
      } else if (!ParseSortScore(by_value.has_value() ? *by_value : item.element, &item.score)) {
        conversion_error = true;
      }
    }
    if (conversion_error) {
      ctx.reply.Error(errors::kSortScoreNotDouble);
      return;
    }
    const bool by_pattern = options.by.has_value();
    auto compare = [&](const SortItem& a, const SortItem& b) {
      int cmp;
      if (!options.alpha) {
        if (a.score != b.score) {
          cmp = a.score > b.score ? 1 : -1;
        } else {
          cmp = CompareBytes(a.element, b.element);
        }
      } else if (by_pattern) {
        if (!a.compare_by.has_value() || !b.compare_by.has_value()) {
          cmp = a.compare_by.has_value() == b.compare_by.has_value() ? 0
                : a.compare_by.has_value()                           ? 1
                                                                     : -1;
        } else {
          cmp = CompareBytes(*a.compare_by, *b.compare_by);
        }
      } else {
        cmp = CompareBytes(a.element, b.element);
      }
      return (options.desc ? -cmp : cmp) < 0;
    };
    std::stable_sort(items.begin(), items.end(), compare);
  }

  int64_t count = end >= start ? end - start + 1 : 0;
  int64_t output_length =
      options.gets.empty() ? count : static_cast<int64_t>(options.gets.size()) * count;

  if (!options.store.has_value()) {
    ctx.reply.ArrayHeader(output_length);
    for (int64_t j = start; j <= end; ++j) {
      const std::string& element = items[static_cast<size_t>(j)].element;
      if (options.gets.empty()) ctx.reply.Bulk(element);
      for (std::string_view pattern : options.gets) {
        std::optional<std::string> value = LookupByPattern(ctx, pattern, element);
        if (value.has_value()) {
          ctx.reply.Bulk(*value);
        } else {
          ctx.reply.Null();
        }
      }
    }
    return;
  }

  // STORE: the result becomes a list (a missing GET value is stored as an empty string).
  std::vector<std::string> result;
  result.reserve(static_cast<size_t>(output_length));
  for (int64_t j = start; j <= end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (options.gets.empty()) result.push_back(element);
    for (std::string_view pattern : options.gets) {
      result.push_back(LookupByPattern(ctx, pattern, element).value_or(""));
    }
  }
  std::string_view destination = *options.store;
  WithKey(ctx, destination, Lookup::kWrite, [&](KeyAccess& access) {
    if (result.empty()) {
      if (access.exists()) {
        RemoveKey(access);
        PublishChange(ctx, access.db, destination, {kGenericEvents, "del"}, {"DEL", destination});
      }
      return;
    }
    auto list = std::make_unique<List>(ctx.settings().collection_limits().list_max_listpack_size);
    for (const std::string& value : result) list->Push(ListEnd::kTail, value);
    ReplaceWithObject(ctx, access, std::move(list));
    // Redis counts one change per element stored, none for clearing the way.
    PublishChange(ctx, access.db, destination, kNoEvent, {"DEL", destination}, /*dirty=*/0);
    std::vector<std::string_view> push;
    if (WantsEffects(ctx)) {
      push = {"RPUSH", destination};
      push.insert(push.end(), result.begin(), result.end());
    }
    PublishChange(ctx, access.db, destination, {kListEvents, "sortstore"}, push, result.size());
  });
  ctx.reply.Integer(output_length);
}

void CmdSort(CommandContext& ctx) { SortGeneric(ctx, /*readonly=*/false); }
void CmdSortRo(CommandContext& ctx) { SortGeneric(ctx, /*readonly=*/true); }

}  // namespace

const std::vector<CommandBinding>& SortCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"sort", CmdSort},
      {"sort_ro", CmdSortRo},
  };
  return kCommands;
}

}  // namespace gigakv::server
