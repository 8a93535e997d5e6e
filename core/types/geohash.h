// Geohash math: the numeric half of Redis's GEO* commands (GEOADD, GEOPOS, GEODIST, GEOHASH,
// GEORADIUS*, GEOSEARCH*), as pure functions. Results are those of Redis 7.0.15's
// src/geohash.c, src/geohash_helper.c and src/geo.c bit for bit: same doubles, same scores, same
// scan ranges, same text, computed with the same operation order (glibc's sin/cos/asin/sqrt, no
// fused multiply-add: gigakv builds with -std=c++20, i.e. -ffp-contract=off, and no -march).
//
// Score format (the double a geo member has in its sorted set, always an integer):
//
//   score      := bit[51] bit[50] ... bit[1] bit[0]              (52 bits, < 2^52; see overflow)
//   bit[2i+1]  := bit i of lon_index                              (odd bits: longitude)
//   bit[2i]    := bit i of lat_index                              (even bits: latitude)
//   lon_index  := trunc((longitude + 180) / 360 * 2^26)                        (0 .. 2^26 - 1)
//   lat_index  := trunc((latitude - kMinLatitude) / (kMaxLatitude - kMinLatitude) * 2^26)
//
// so the most significant bit is the longitude's, and a prefix of 2 * step bits names a cell of
// 2^step x 2^step over the (Mercator-limited) world: every score of that cell lies in
// [prefix << (52 - 2 * step), (prefix + 1) << (52 - 2 * step)). Overflow quirk, reproduced: a
// coordinate exactly on the maximum (longitude 180 or latitude kMaxLatitude) gets index 2^26,
// which sets bit 53 (longitude) or bit 52 (latitude): GEOADD 180 85.05112878 stores
// 2^53 + 2^52 = 13510798882111488. Decoding such a score clamps to the limits.
//
// A decoded point is the center of its cell, clamped to the limits above. Redis reads a score
// as a double and converts it with (uint64_t); ScoreToBits reproduces that conversion for any
// double (negative, fractional, huge, infinite), so every zset member decodes to some point.
//
// Units: distances and shape sizes are in meters unless a function takes a unit factor (meters
// per unit, from UnitFactor). Angles are in degrees. Earth radius: 6372797.560856 m.
//
// Complexity: every function is O(1) except SearchRanges (O(1), at most 9 ranges, one
// allocation) and the formatting functions (O(length of the text)). No exceptions other than
// std::bad_alloc; no state; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gigakv::geo {

inline constexpr double kMinLongitude = -180, kMaxLongitude = 180;
inline constexpr double kMinLatitude = -85.05112878, kMaxLatitude = 85.05112878;
inline constexpr int kStepMax = 26;  // bits per coordinate: scores are 52-bit.

// Validates as GEOADD does (Redis's range check); false = out of range. NaN is rejected too
// (Redis's argument parser refuses it before the range check).
bool ValidCoordinates(double longitude, double latitude);

// The 52-bit score GEOADD stores for a point (geohashEncodeWGS84 + geohashAlign52Bits). Requires
// ValidCoordinates(longitude, latitude); returns 0 otherwise. See the overflow quirk above.
// GEOADD hands this integer to ZADD as text, so the zset holds static_cast<double>(score): exact
// below 2^53; the overflow scores above it round to even (180 85.0511287 encodes to
// 10508399130531157 and is stored as 10508399130531156).
uint64_t Encode(double longitude, double latitude);

// Redis's (uint64_t) cast of a zset score (decodeGeohash) as compiled for x86-64: truncation
// toward zero for [0, 2^64), the two's complement of the truncated value for (-2^63, 0),
// 0x8000000000000000 for values <= -2^63, 0 for values >= 2^64 and +inf. Use it to turn a zset
// score into the `score` argument of Decode / HashString (exact for every GEOADD score).
uint64_t ScoreToBits(double score);

// The point GEOPOS returns for a score: the center of its cell, with Redis's clamping
// (geohashDecodeToLongLatWGS84). Accepts all 64 bits as Redis does (bits above 52 push the
// coordinates out of range, then the clamp applies). Always succeeds in Redis 7.0 (a step-26
// hash never counts as "zero"), so this always returns true; the bool is kept for callers.
bool Decode(uint64_t score, double* longitude, double* latitude);

// Haversine distance in meters with Redis's earth radius (geohashGetDistance, including its
// 7.0 shortcut: when sin(delta longitude / 2) is 0 the distance is the latitude arc alone).
// Redis 7.0's radius and box checks use this same function (there is no separate optimized
// radius check in 7.0), so WithinShape calls it too. Symmetric bit for bit.
double Distance(double lon1, double lat1, double lon2, double lat2);

// GEOHASH's 11-character string for a score: decode (as Decode), re-encode at step 26 with the
// standard latitude range [-90, 90], emit ten base-32 characters of 5 bits each from the top of
// the 52 bits (alphabet "0123456789bcdefghjkmnpqrstuvwxyz"), then a constant '0'.
std::string HashString(uint64_t score);

// The search: a shape (radius in meters around a center, or a box width x height meters).
struct Shape {
  enum class Kind { kRadius, kBox } kind = Kind::kRadius;
  double longitude = 0, latitude = 0;
  double radius_m = 0;               // kRadius
  double width_m = 0, height_m = 0;  // kBox
};

// The score ranges [min, max) of the (up to 9) cells to scan for `shape`, in Redis's order
// (center, north, south, east, west, north_east, north_west, south_east, south_west), with
// Redis's de-duplication of neighbors and its "skip" rules (geohashGetAreasByShapeWGS84 and
// membersOfAllNeighbors: the step computation, the neighbor pruning at the poles / when the
// area is smaller than the cell, skipping a neighbor equal to the previous one). Each range is
// what membersOfGeoHashBox passes to the zset range scan: min = hash << (52 - 2*step), max =
// (hash + 1) << (52 - 2*step), min inclusive, max exclusive.
//
// Scan contract (geoGetPointsInRange): Redis compares the zset's double scores against
// static_cast<double>(min) and static_cast<double>(max) (min <= score < max), scanning the
// ranges in this order and keeping duplicates if two ranges overlap (they do not in practice).
// The center must satisfy ValidCoordinates. With COUNT n ANY, Redis stops scanning (also inside
// a range) as soon as n points matched.
struct ScoreRange {
  uint64_t min;
  uint64_t max;
};
std::vector<ScoreRange> SearchRanges(const Shape& shape);

// Exact variant for GEOSEARCH/GEORADIUS arguments given in another unit: `shape`'s radius_m,
// width_m and height_m hold the numbers as the client typed them (in the unit whose factor is
// `unit_factor`, not meters). Needed for BYBOX in km/mi/ft: Redis estimates the step from
// sqrt((w/2)^2 + (h/2)^2) * factor, which can differ in the last bit from the same value computed
// from sizes already in meters. For kRadius, and for any shape with unit_factor 1, it equals
// SearchRanges(shape with sizes multiplied by unit_factor).
std::vector<ScoreRange> SearchRanges(const Shape& shape, double unit_factor);

// Whether a point is inside the shape (geoWithinShape), and its distance from the center in
// meters (set even when it is outside, if Redis computes it). kRadius: *distance_m is always
// set, inside = distance <= radius_m. kBox: the latitude arc from the center must be <=
// height_m / 2, then the arc along the point's parallel must be <= width_m / 2; *distance_m is
// set (to the center-to-point distance) only when the point is inside. `distance_m` may be null.
// Pass the decoded point (Decode), as Redis does.
bool WithinShape(const Shape& shape, double longitude, double latitude, double* distance_m);

// The same with sizes in the unit of `unit_factor` (see the SearchRanges overload): Redis
// multiplies radius/width/height by the factor here; the distance is still in meters.
bool WithinShape(const Shape& shape, double unit_factor, double longitude, double latitude,
                 double* distance_m);

// WithinShape for many points of one search: what every check shares is computed once (the
// sizes in meters, the cosine of the center's latitude), and a point of a radius search whose
// latitude alone puts it out of reach is refused without the haversine (the great-circle distance
// is never below the latitude arc; the test keeps a 1e-9 relative margin, so a point it refuses
// is one Redis's distance refuses too). Results are bit-identical to WithinShape, except that a
// refused point's distance is not computed. Cheap to copy; holds no reference to `shape`.
class ShapeMatcher {
 public:
  ShapeMatcher(const Shape& shape, double unit_factor);
  bool Within(double longitude, double latitude, double* distance_m) const;

 private:
  Shape shape_;
  double radius_m_, half_width_m_, half_height_m_;
  double latitude_reach_m_;  // kRadius: the latitude arc beyond which no point can be inside.
  double cos_latitude_;      // cos of the center's latitude in radians.
};

// Unit conversions as GEO* arguments take them: "m", "km", "ft", "mi" (case-insensitive);
// returns the factor (meters per unit) or a negative value for an unknown unit. As Redis
// (strcasecmp on a C string) the text ends at its first NUL byte: "km\0x" is "km".
double UnitFactor(std::string_view unit);

// --- Reply text ---------------------------------------------------------------------------------
// GEOPOS and WITHCOORD coordinates: Redis's addReplyHumanLongDouble, i.e. "%.17Lf" of the value as
// a long double with trailing zeros (and a trailing '.') removed, "-0" printed as "0". Same text
// as gigakv::FormatLongDouble(static_cast<long double>(value)) from gigakv/numbers.h. RESP2: a
// bulk string; RESP3: a double (",<text>\r\n").
std::string FormatCoordinate(double value);

// GEODIST and WITHDIST: Redis's addReplyDoubleDistance = fixedpoint_d2string(d, 4): llrint(d *
// 10000) printed with exactly four decimals ("0.0000" for 0, "-" when negative), which is not
// always printf's "%.4f" (ties round to even on the scaled double). Always a bulk string, also in
// RESP3. `meters` is divided by `unit_factor` first, as Redis does.
std::string FormatDistance(double meters, double unit_factor);

}  // namespace gigakv::geo
