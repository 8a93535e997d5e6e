// Geo family (Redis's geo.c): GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE,
// GEORADIUS, GEORADIUSBYMEMBER and their _RO variants.
//
// Points live in sorted sets: a member's score is the 52-bit interleaved geohash of its
// coordinates (core/types/geohash.h), exactly Redis's, so a geo set moves between Redis and
// gigakv as any sorted set and every ZSET command works on it. GEOADD is ZADD with computed
// scores: it runs as one (its effect, notification and reply are ZADD's), as Redis rewrites it.
// Coordinates read back are the centers of the 52-bit cells, formatted as Redis formats them.
//
// Searches scan the score ranges of the (up to 9) geohash cells covering the shape
// (geo::SearchRanges), keep the points inside it (geo::WithinShape), then sort by distance
// (when asked, or forced by COUNT) exactly as Redis does, ties included: a stable sort when every
// match is returned (glibc's qsort is a merge sort), Redis's partial quicksort otherwise.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/geohash.h"
#include "core/types/zset.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/commands/zset_results.h"

namespace gigakv::server {
namespace {

// Redis's extractLongLatOrReply: two floats, then the range check.
bool ParseLonLatOrReply(CommandContext& ctx, std::string_view lon_text, std::string_view lat_text,
                        double* longitude, double* latitude) {
  if (!ParseDouble(lon_text, longitude) || !ParseDouble(lat_text, latitude)) {
    ctx.reply.Error(errors::kNotFloat);
    return false;
  }
  if (!geo::ValidCoordinates(*longitude, *latitude)) {
    char text[700];  // Two %f of doubles up to 1e308: at most 317 characters each.
    std::snprintf(text, sizeof(text), errors::kGeoBadLonLat.data(), *longitude, *latitude);
    ctx.reply.Error(text);
    return false;
  }
  return true;
}

// Redis's addReplyHumanLongDouble of a coordinate.
void ReplyCoordinate(CommandContext& ctx, double value) {
  ctx.reply.DoubleText(geo::FormatCoordinate(value));
}

// The decoded position of a member's score (Redis's decodeGeohash), if it decodes.
bool DecodeScore(double score, double* longitude, double* latitude) {
  return geo::Decode(geo::ScoreToBits(score), longitude, latitude);
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of the members' geohashes.
void CmdGeoAdd(CommandContext& ctx) {
  bool nx = false, xx = false;
  size_t first = 2;
  for (; first < ctx.argc(); ++first) {
    const std::string_view option = ctx.arg(first);
    if (ArgIs(option, "nx")) {
      nx = true;
    } else if (ArgIs(option, "xx")) {
      xx = true;
    } else if (!ArgIs(option, "ch")) {
      break;
    }
  }
  if ((ctx.argc() - first) % 3 != 0 || (nx && xx)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  const size_t elements = (ctx.argc() - first) / 3;
  std::vector<std::string> scores(elements);
  std::vector<std::string_view> zadd_args;
  zadd_args.reserve(first + 2 * elements);
  zadd_args.push_back("zadd");
  for (size_t i = 1; i < first; ++i) zadd_args.push_back(ctx.arg(i));
  for (size_t i = 0; i < elements; ++i) {
    double longitude = 0, latitude = 0;
    if (!ParseLonLatOrReply(ctx, ctx.arg(first + 3 * i), ctx.arg(first + 3 * i + 1), &longitude,
                            &latitude)) {
      return;
    }
    scores[i] = std::to_string(geo::Encode(longitude, latitude));
    zadd_args.push_back(scores[i]);
    zadd_args.push_back(ctx.arg(first + 3 * i + 2));
  }
  const CommandSpec* zadd = ctx.commands().Find("zadd");
  CommandContext zadd_ctx{zadd_args, ctx.reply, ctx.client, ctx.services, ctx.store, *zadd};
  zadd->handler(zadd_ctx);
}

// Runs `fn(zset or null)` on the sorted set at `key` (missing: null), or answers WRONGTYPE.
template <typename Fn>
void ReadGeoSet(CommandContext& ctx, std::string_view key, Fn&& fn) {
  WithKey(ctx, key, Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type = false;
    const ZSet* zset = ReadObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    fn(zset);
  });
}

// GEOPOS and GEOHASH: an array with one entry per member argument (from 2 on), written by
// `found(score, longitude, latitude)` for a member whose score decodes, else by `missing()`.
template <typename Found, typename Missing>
void ReplyPerMember(CommandContext& ctx, Found&& found, Missing&& missing) {
  ReadGeoSet(ctx, ctx.arg(1), [&](const ZSet* zset) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 2));
    for (size_t i = 2; i < ctx.argc(); ++i) {
      const std::optional<double> score = zset == nullptr ? std::nullopt : zset->Score(ctx.arg(i));
      double longitude = 0, latitude = 0;
      if (score.has_value() && DecodeScore(*score, &longitude, &latitude)) {
        found(*score, longitude, latitude);
      } else {
        missing();
      }
    }
  });
}

// GEOPOS key member [...]: each member's [longitude, latitude], or a null array.
void CmdGeoPos(CommandContext& ctx) {
  ReplyPerMember(
      ctx,
      [&](double, double longitude, double latitude) {
        ctx.reply.ArrayHeader(2);
        ReplyCoordinate(ctx, longitude);
        ReplyCoordinate(ctx, latitude);
      },
      [&] { ctx.reply.NullArray(); });
}

// GEODIST key member1 member2 [M|KM|FT|MI]: the distance, or null when a member is missing.
void CmdGeoDist(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.argc() == 5) {
    to_meters = geo::UnitFactor(ctx.arg(4));
    if (to_meters < 0) {
      ctx.reply.Error(errors::kGeoBadUnit);
      return;
    }
  } else if (ctx.argc() > 5) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ReadGeoSet(ctx, ctx.arg(1), [&](const ZSet* zset) {
    if (zset == nullptr) {
      ctx.reply.Null();
      return;
    }
    const std::optional<double> first = zset->Score(ctx.arg(2));
    const std::optional<double> second = zset->Score(ctx.arg(3));
    double xyxy[4];
    if (!first.has_value() || !second.has_value() || !DecodeScore(*first, &xyxy[0], &xyxy[1]) ||
        !DecodeScore(*second, &xyxy[2], &xyxy[3])) {
      ctx.reply.Null();
      return;
    }
    ctx.reply.Bulk(
        geo::FormatDistance(geo::Distance(xyxy[0], xyxy[1], xyxy[2], xyxy[3]), to_meters));
  });
}

// GEOHASH key member [...]: each member's standard 11-character geohash, or null.
void CmdGeoHash(CommandContext& ctx) {
  ReplyPerMember(
      ctx,
      [&](double score, double, double) {
        ctx.reply.Bulk(geo::HashString(geo::ScoreToBits(score)));
      },
      [&] { ctx.reply.Null(); });
}

// --- Searches -----------------------------------------------------------------------------------

// Which command georadiusGeneric serves (Redis's flags).
enum SearchFlag : unsigned {
  kRadiusFromCoords = 1,  // GEORADIUS[_RO] key longitude latitude radius unit [options]
  kRadiusFromMember = 2,  // GEORADIUSBYMEMBER[_RO] key member radius unit [options]
  kNoStore = 4,           // The _RO variants: no STORE/STOREDIST.
  kSearch = 8,            // GEOSEARCH key [options]
  kSearchStore = 16,      // GEOSEARCHSTORE destination key [options]
};

enum class Order : uint8_t { kNone, kAscending, kDescending };

struct SearchRequest {
  geo::Shape shape;  // Sizes as the client typed them, in the unit of unit_factor.
  double unit_factor = 1;
  bool with_dist = false, with_hash = false, with_coord = false;
  bool any = false;  // COUNT n ANY: stop scanning at n matches.
  Order order = Order::kNone;
  int64_t count = 0;  // 0 = no limit.
  std::optional<std::string_view> store_key;
  bool store_dist = false;
};

struct GeoMatch {
  double longitude = 0, latitude = 0;
  double distance = 0;  // Meters.
  double score = 0;
  std::string member;
};

// The position of `member` in `zset` as the center of a search (Redis's longLatFromMember).
bool MemberPositionOrReply(CommandContext& ctx, const ZSet& zset, std::string_view member,
                           geo::Shape* shape) {
  const std::optional<double> score = zset.Score(member);
  if (!score.has_value() || !DecodeScore(*score, &shape->longitude, &shape->latitude)) {
    ctx.reply.Error(errors::kGeoBadMember);
    return false;
  }
  return true;
}

// A size and its unit (Redis's extractDistanceOrReply / extractBoxOrReply): non-negative doubles,
// then the unit.
bool ParseSizeOrReply(CommandContext& ctx, std::string_view text, std::string_view not_numeric,
                      std::string_view negative, double* size) {
  if (!ParseDouble(text, size)) {
    ctx.reply.Error(not_numeric);
    return false;
  }
  if (*size < 0) {
    ctx.reply.Error(negative);
    return false;
  }
  return true;
}
bool ParseUnitOrReply(CommandContext& ctx, std::string_view text, double* unit_factor) {
  *unit_factor = geo::UnitFactor(text);
  if (*unit_factor < 0) {
    ctx.reply.Error(errors::kGeoBadUnit);
    return false;
  }
  return true;
}
bool ParseRadiusOrReply(CommandContext& ctx, size_t index, SearchRequest* request) {
  request->shape.kind = geo::Shape::Kind::kRadius;
  return ParseSizeOrReply(ctx, ctx.arg(index), errors::kGeoNeedRadius, errors::kGeoNegativeRadius,
                          &request->shape.radius_m) &&
         ParseUnitOrReply(ctx, ctx.arg(index + 1), &request->unit_factor);
}
bool ParseBoxOrReply(CommandContext& ctx, size_t index, SearchRequest* request) {
  double width = 0, height = 0;
  if (!ParseDouble(ctx.arg(index), &width)) {
    ctx.reply.Error(errors::kGeoNeedWidth);
    return false;
  }
  if (!ParseDouble(ctx.arg(index + 1), &height)) {
    ctx.reply.Error(errors::kGeoNeedHeight);
    return false;
  }
  if (width < 0 || height < 0) {
    ctx.reply.Error(errors::kGeoNegativeBox);
    return false;
  }
  request->shape.kind = geo::Shape::Kind::kBox;
  request->shape.width_m = width;
  request->shape.height_m = height;
  return ParseUnitOrReply(ctx, ctx.arg(index + 2), &request->unit_factor);
}

// Parses the arguments in Redis's order (georadiusGeneric), so the first error found is Redis's.
// `zset` is the source (null when missing: the center member of a BYMEMBER search is then not
// looked up, nor its radius parsed, as in Redis).
bool ParseSearchOrReply(CommandContext& ctx, unsigned flags, const ZSet* zset,
                        SearchRequest* request) {
  geo::Shape& shape = request->shape;
  size_t base = 0;
  if (flags & kRadiusFromCoords) {
    base = 6;
    if (!ParseLonLatOrReply(ctx, ctx.arg(2), ctx.arg(3), &shape.longitude, &shape.latitude) ||
        !ParseRadiusOrReply(ctx, 4, request)) {
      return false;
    }
  } else if (flags & kRadiusFromMember) {
    base = 5;
    if (zset != nullptr && (!MemberPositionOrReply(ctx, *zset, ctx.arg(2), &shape) ||
                            !ParseRadiusOrReply(ctx, 3, request))) {
      return false;
    }
  } else {
    base = 2;
    if (flags & kSearchStore) {
      base = 3;
      request->store_key = ctx.arg(1);
    }
  }
  const bool search = (flags & kSearch) != 0;
  const bool can_store = !(flags & kNoStore) && !search;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  const size_t argc = ctx.argc();
  for (size_t i = base; i < argc; ++i) {
    const std::string_view arg = ctx.arg(i);
    const size_t following = argc - i - 1;  // Arguments after this one.
    if (ArgIs(arg, "withdist")) {
      request->with_dist = true;
    } else if (ArgIs(arg, "withhash")) {
      request->with_hash = true;
    } else if (ArgIs(arg, "withcoord")) {
      request->with_coord = true;
    } else if (ArgIs(arg, "any")) {
      request->any = true;
    } else if (ArgIs(arg, "asc")) {
      request->order = Order::kAscending;
    } else if (ArgIs(arg, "desc")) {
      request->order = Order::kDescending;
    } else if (ArgIs(arg, "count") && following >= 1) {
      if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &request->count)) return false;
      if (request->count <= 0) {
        ctx.reply.Error(errors::kGeoCountNotPositive);
        return false;
      }
      ++i;
    } else if ((ArgIs(arg, "store") || ArgIs(arg, "storedist")) && following >= 1 && can_store) {
      request->store_key = ctx.arg(i + 1);
      request->store_dist = ArgIs(arg, "storedist");
      ++i;
    } else if (ArgIs(arg, "storedist") && (flags & kSearchStore)) {
      request->store_dist = true;
    } else if (ArgIs(arg, "frommember") && following >= 1 && search && !from_lonlat) {
      if (zset != nullptr && !MemberPositionOrReply(ctx, *zset, ctx.arg(i + 1), &shape)) {
        return false;
      }
      from_member = true;
      ++i;
    } else if (ArgIs(arg, "fromlonlat") && following >= 2 && search && !from_member) {
      if (!ParseLonLatOrReply(ctx, ctx.arg(i + 1), ctx.arg(i + 2), &shape.longitude,
                              &shape.latitude)) {
        return false;
      }
      from_lonlat = true;
      i += 2;
    } else if (ArgIs(arg, "byradius") && following >= 2 && search && !by_box) {
      if (!ParseRadiusOrReply(ctx, i + 1, request)) return false;
      by_radius = true;
      i += 2;
    } else if (ArgIs(arg, "bybox") && following >= 3 && search && !by_radius) {
      if (!ParseBoxOrReply(ctx, i + 1, request)) return false;
      by_box = true;
      i += 3;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (request->store_key.has_value() &&
      (request->with_dist || request->with_hash || request->with_coord)) {
    ctx.reply.Error(
        FormatText(errors::kGeoStoreWithOptions,
                   {(flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS"}));
    return false;
  }
  if (search && !from_member && !from_lonlat) {
    ctx.reply.Error(FormatText(errors::kGeoNeedFrom, {ctx.arg(0)}));
    return false;
  }
  if (search && !by_radius && !by_box) {
    ctx.reply.Error(FormatText(errors::kGeoNeedShape, {ctx.arg(0)}));
    return false;
  }
  if (request->any && request->count == 0) {
    ctx.reply.Error(errors::kGeoAnyNeedsCount);
    return false;
  }
  return true;
}

// The points of `zset` inside the request's shape, in scan order (Redis's membersOfAllNeighbors
// and geoGetPointsInRange): cell by cell, ascending scores within a cell. With ANY, the scan
// stops as soon as `count` points matched.
std::vector<GeoMatch> FindMatches(const ZSet& zset, const SearchRequest& request) {
  const size_t limit = request.any ? static_cast<size_t>(request.count) : 0;
  std::vector<GeoMatch> matches;
  const geo::ShapeMatcher matcher(request.shape, request.unit_factor);
  auto full = [&] { return limit != 0 && matches.size() >= limit; };
  for (const geo::ScoreRange& cell : geo::SearchRanges(request.shape, request.unit_factor)) {
    if (full()) break;
    const ZScoreRange range{static_cast<double>(cell.min), static_cast<double>(cell.max),
                            /*min_exclusive=*/false, /*max_exclusive=*/true};
    auto [begin, end] = zset.ScoreSpan(range);
    // Without a limit one visit covers the cell; with one, visit only as many points as could
    // still be needed, until the cell ends or enough matched.
    while (begin < end && !full()) {
      const size_t stop = limit == 0 ? end : std::min(end, begin + (limit - matches.size()));
      zset.Visit(begin, stop, /*reverse=*/false, [&](std::string_view member, double score) {
        GeoMatch match;
        DecodeScore(score, &match.longitude, &match.latitude);
        if (matcher.Within(match.longitude, match.latitude, &match.distance)) {
          match.score = score;
          match.member = std::string(member);
          matches.push_back(std::move(match));
        }
      });
      begin = stop;
    }
  }
  return matches;
}

// Redis's pqsort (src/pqsort.c): the Bentley-McIlroy quicksort of BSD's qsort that skips the
// partitions lying wholly outside the positions [lrange, rrange] it is asked to get right.
// Reproduced step for step on elements (not bytes) because it is not stable: the order it leaves
// among equal distances is the order Redis replies. `cmp` returns <0, 0 or >0.
template <typename T, typename Cmp>
T* MedianOfThree(T* a, T* b, T* c, Cmp& cmp) {
  return cmp(*a, *b) < 0 ? (cmp(*b, *c) < 0 ? b : (cmp(*a, *c) < 0 ? c : a))
                         : (cmp(*b, *c) > 0 ? b : (cmp(*a, *c) < 0 ? a : c));
}
template <typename T, typename Cmp>
void PartialQuickSort(T* a, size_t n, Cmp& cmp, const T* lrange, const T* rrange) {
  using std::swap;
  for (;;) {
    if (n < 7) {
      for (T* pm = a + 1; pm < a + n; ++pm) {
        for (T* pl = pm; pl > a && cmp(*(pl - 1), *pl) > 0; --pl) swap(*pl, *(pl - 1));
      }
      return;
    }
    T* pm = a + n / 2;
    if (n > 7) {
      T* pl = a;
      T* pn = a + n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        pl = MedianOfThree(pl, pl + d, pl + 2 * d, cmp);
        pm = MedianOfThree(pm - d, pm, pm + d, cmp);
        pn = MedianOfThree(pn - 2 * d, pn - d, pn, cmp);
      }
      pm = MedianOfThree(pl, pm, pn, cmp);
    }
    swap(*a, *pm);
    T* pa = a + 1;
    T* pb = a + 1;
    T* pc = a + n - 1;
    T* pd = a + n - 1;
    for (;;) {
      int result = 0;
      while (pb <= pc && (result = cmp(*pb, *a)) <= 0) {
        if (result == 0) swap(*pa++, *pb);
        ++pb;
      }
      while (pb <= pc && (result = cmp(*pc, *a)) >= 0) {
        if (result == 0) swap(*pc, *pd--);
        --pc;
      }
      if (pb > pc) break;
      swap(*pb++, *pc--);
    }
    T* pn = a + n;
    ptrdiff_t r = std::min(pa - a, pb - pa);
    std::swap_ranges(a, a + r, pb - r);
    r = std::min(pd - pc, pn - pd - 1);
    std::swap_ranges(pb, pb + r, pn - r);
    // Whether the block [first, first + size) holds a position in [lrange, rrange].
    auto wanted = [&](const T* first, ptrdiff_t size) {
      const T* last = first + size - 1;
      return !((lrange < first && rrange < first) || (lrange > last && rrange > last));
    };
    if ((r = pb - pa) > 1 && wanted(a, r)) {
      PartialQuickSort(a, static_cast<size_t>(r), cmp, lrange, rrange);
    }
    if ((r = pd - pc) <= 1) return;
    a = pn - r;
    n = static_cast<size_t>(r);
    if (!wanted(a, r)) return;
  }
}

// Sorts the matches by distance as Redis does: qsort (glibc's merge sort, so stable) when all are
// returned, pqsort of the first `returned` positions otherwise.
void SortMatches(std::vector<GeoMatch>& matches, Order order, size_t returned) {
  if (order == Order::kNone || matches.empty()) return;
  const bool descending = order == Order::kDescending;
  auto cmp = [descending](const GeoMatch& a, const GeoMatch& b) {
    const int ascending = a.distance > b.distance ? 1 : (a.distance == b.distance ? 0 : -1);
    return descending ? -ascending : ascending;
  };
  if (returned == matches.size()) {
    std::stable_sort(matches.begin(), matches.end(),
                     [&](const GeoMatch& a, const GeoMatch& b) { return cmp(a, b) < 0; });
  } else {
    PartialQuickSort(matches.data(), matches.size(), cmp, matches.data(),
                     matches.data() + returned - 1);
  }
}

void ReplyMatches(CommandContext& ctx, const SearchRequest& request,
                  const std::vector<GeoMatch>& matches, size_t returned) {
  const int64_t options =
      int64_t{request.with_dist} + int64_t{request.with_hash} + int64_t{request.with_coord};
  ctx.reply.ArrayHeader(static_cast<int64_t>(returned));
  for (size_t i = 0; i < returned; ++i) {
    const GeoMatch& match = matches[i];
    if (options != 0) ctx.reply.ArrayHeader(options + 1);
    ctx.reply.Bulk(match.member);
    if (request.with_dist) {
      ctx.reply.Bulk(geo::FormatDistance(match.distance, request.unit_factor));
    }
    if (request.with_hash) ctx.reply.Integer(static_cast<int64_t>(match.score));
    if (request.with_coord) {
      ctx.reply.ArrayHeader(2);
      ReplyCoordinate(ctx, match.longitude);
      ReplyCoordinate(ctx, match.latitude);
    }
  }
}

// georadiusGeneric: every search command. `source_index` is the searched key's argument.
void SearchGeneric(CommandContext& ctx, size_t source_index, unsigned flags) {
  // Lock the source and whatever could turn out to be the destination (GEOSEARCHSTORE's, or each
  // argument after a STORE/STOREDIST word), so the search and the store are one atomic step.
  std::vector<std::string_view> lock_keys{ctx.arg(source_index)};
  if (flags & kSearchStore) {
    lock_keys.push_back(ctx.arg(1));
  } else if (!(flags & (kNoStore | kSearch))) {
    for (size_t i = 2; i + 1 < ctx.argc(); ++i) {
      if (ArgIs(ctx.arg(i), "store") || ArgIs(ctx.arg(i), "storedist")) {
        lock_keys.push_back(ctx.arg(i + 1));
      }
    }
  }
  Store::MultiLock lock = ctx.store.LockKeys(lock_keys);
  KeyAccess source = FindLocked(ctx, ctx.arg(source_index), Lookup::kRead);
  bool wrong_type = false;
  const ZSet* zset = ReadObject<ZSet>(ctx, source, KeyType::kZSet, &wrong_type);
  if (wrong_type) return;
  SearchRequest request;
  if (!ParseSearchOrReply(ctx, flags, zset, &request)) return;

  std::vector<GeoMatch> matches;
  if (zset != nullptr) {
    // COUNT without an order would return arbitrary points: Redis sorts ascending (not for ANY).
    if (request.count != 0 && request.order == Order::kNone && !request.any) {
      request.order = Order::kAscending;
    }
    matches = FindMatches(*zset, request);
  }
  const size_t returned = request.count == 0
                              ? matches.size()
                              : std::min(matches.size(), static_cast<size_t>(request.count));
  SortMatches(matches, request.order, returned);
  if (!request.store_key.has_value()) {
    ReplyMatches(ctx, request, matches, returned);
    return;
  }
  ZSetElements elements;
  elements.reserve(returned);
  for (size_t i = 0; i < returned; ++i) {
    GeoMatch& match = matches[i];
    elements.emplace_back(std::move(match.member),
                          request.store_dist ? match.distance / request.unit_factor : match.score);
  }
  std::unique_ptr<ZSet> result = BuildZSetResult(ctx, elements, /*stored=*/true);
  KeyAccess dest = FindLocked(ctx, *request.store_key, Lookup::kWrite);
  StoreZSetResult(ctx, dest, std::move(result),
                  (flags & kSearch) ? "geosearchstore" : "georadiusstore", /*dirty=*/returned);
}

void CmdGeoRadius(CommandContext& ctx) { SearchGeneric(ctx, 1, kRadiusFromCoords); }
void CmdGeoRadiusByMember(CommandContext& ctx) { SearchGeneric(ctx, 1, kRadiusFromMember); }
void CmdGeoRadiusRo(CommandContext& ctx) { SearchGeneric(ctx, 1, kRadiusFromCoords | kNoStore); }
void CmdGeoRadiusByMemberRo(CommandContext& ctx) {
  SearchGeneric(ctx, 1, kRadiusFromMember | kNoStore);
}
void CmdGeoSearch(CommandContext& ctx) { SearchGeneric(ctx, 1, kSearch); }
void CmdGeoSearchStore(CommandContext& ctx) { SearchGeneric(ctx, 2, kSearch | kSearchStore); }

}  // namespace

const std::vector<CommandBinding>& GeoCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"geoadd", CmdGeoAdd},
      {"geopos", CmdGeoPos},
      {"geodist", CmdGeoDist},
      {"geohash", CmdGeoHash},
      {"georadius", CmdGeoRadius},
      {"georadius_ro", CmdGeoRadiusRo},
      {"georadiusbymember", CmdGeoRadiusByMember},
      {"georadiusbymember_ro", CmdGeoRadiusByMemberRo},
      {"geosearch", CmdGeoSearch},
      {"geosearchstore", CmdGeoSearchStore},
  };
  return kCommands;
}

}  // namespace gigakv::server
