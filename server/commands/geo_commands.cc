// Geo family (Redis's geo.c): GEOADD, GEOPOS, GEODIST, GEOHASH.
//
// Points live in sorted sets: a member's score is the 52-bit interleaved geohash of its
// coordinates (core/types/geohash.h), exactly Redis's, so a geo set moves between Redis and
// gigakv as any sorted set and every ZSET command works on it. GEOADD is ZADD with computed
// scores: it runs as one (its effect, notification and reply are ZADD's), as Redis rewrites it.
// Coordinates read back are the centers of the 52-bit cells, formatted as Redis formats them.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/types/geohash.h"
#include "core/types/zset.h"
#include "gigakv/numbers.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"

namespace gigakv::server {
namespace {

constexpr std::string_view kBadUnit = "ERR unsupported unit provided. please use M, KM, FT, MI";

// Redis's extractLongLatOrReply: two floats, then the range check.
bool ParseLonLatOrReply(CommandContext& ctx, std::string_view lon_text, std::string_view lat_text,
                        double* longitude, double* latitude) {
  if (!ParseDouble(lon_text, longitude) || !ParseDouble(lat_text, latitude)) {
    ctx.reply.Error(errors::kNotFloat);
    return false;
  }
  if (!geo::ValidCoordinates(*longitude, *latitude)) {
    char text[700];  // Two %f of doubles up to 1e308: at most 317 characters each.
    std::snprintf(text, sizeof(text), "ERR invalid longitude,latitude pair %f,%f", *longitude,
                  *latitude);
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
      ctx.reply.Error(kBadUnit);
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

}  // namespace

const std::vector<CommandBinding>& GeoCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"geoadd", CmdGeoAdd},
      {"geopos", CmdGeoPos},
      {"geodist", CmdGeoDist},
      {"geohash", CmdGeoHash},
  };
  return kCommands;
}

}  // namespace gigakv::server
