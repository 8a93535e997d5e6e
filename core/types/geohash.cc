#include "core/types/geohash.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace gigakv::geo {
namespace {

// Redis's constants (geohash_helper.c). kDegToRad is its D_R = M_PI / 180.0.
constexpr double kDegToRad = std::numbers::pi / 180.0;
constexpr double kEarthRadiusM = 6372797.560856;
constexpr double kMercatorMax = 20037726.37;

constexpr uint64_t kEvenBits = 0x5555555555555555ULL;  // Latitude bits.
constexpr uint64_t kOddBits = 0xaaaaaaaaaaaaaaaaULL;   // Longitude bits.

inline double DegToRad(double degrees) { return degrees * kDegToRad; }
inline double RadToDeg(double radians) { return radians / kDegToRad; }

struct Range {
  double min;
  double max;
};

constexpr Range kLongitudeRange = {kMinLongitude, kMaxLongitude};
constexpr Range kLatitudeRange = {kMinLatitude, kMaxLatitude};

// A cell: `step` bits per coordinate, interleaved in the low 2 * step bits of `bits` (plus the
// overflow bits of a coordinate on its range's maximum). step 0 with bits 0 is "no cell".
struct Cell {
  uint64_t bits = 0;
  int step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const Cell&) const = default;
};

struct Area {
  Range longitude;
  Range latitude;
};

// Spreads the 32 bits of `v` to the even bit positions.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Gathers the even bit positions of `x` into 32 bits.
uint32_t Gather(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

inline uint64_t Interleave(uint32_t lat_index, uint32_t lon_index) {
  return Spread(lat_index) | (Spread(lon_index) << 1);
}

// geohashEncode: false (cell untouched) outside the Mercator limits or `range`.
bool EncodeCell(const Range& lon_range, const Range& lat_range, double longitude, double latitude,
                int step, Cell* cell) {
  if (step < 1 || step > 32) return false;
  if (!(longitude <= kMaxLongitude && longitude >= kMinLongitude && latitude <= kMaxLatitude &&
        latitude >= kMinLatitude)) {
    return false;
  }
  if (latitude < lat_range.min || latitude > lat_range.max || longitude < lon_range.min ||
      longitude > lon_range.max) {
    return false;
  }
  double lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (longitude - lon_range.min) / (lon_range.max - lon_range.min);
  const double scale = static_cast<double>(1ULL << step);
  lat_offset *= scale;
  lon_offset *= scale;
  // Both offsets are in [0, 2^step]: the conversion truncates, 2^step itself overflows.
  cell->bits = Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  cell->step = step;
  return true;
}

// geohashDecode: the cell's bounds. Uses all 64 bits, and 32-bit index arithmetic (index + 1
// wraps to 0 for index 2^32 - 1), as Redis does.
Area DecodeCell(const Range& lon_range, const Range& lat_range, const Cell& cell) {
  const uint32_t lat_index = Gather(cell.bits);
  const uint32_t lon_index = Gather(cell.bits >> 1);
  const double lat_scale = lat_range.max - lat_range.min;
  const double lon_scale = lon_range.max - lon_range.min;
  const double cells = static_cast<double>(1ULL << cell.step);
  const uint32_t lat_next = lat_index + 1;
  const uint32_t lon_next = lon_index + 1;
  Area area;
  area.latitude.min = lat_range.min + (lat_index * 1.0 / cells) * lat_scale;
  area.latitude.max = lat_range.min + (lat_next * 1.0 / cells) * lat_scale;
  area.longitude.min = lon_range.min + (lon_index * 1.0 / cells) * lon_scale;
  area.longitude.max = lon_range.min + (lon_next * 1.0 / cells) * lon_scale;
  return area;
}

// geohashDecodeAreaToLongLat: the center, clamped to the Mercator limits.
void AreaCenter(const Area& area, double* longitude, double* latitude) {
  double lon = (area.longitude.min + area.longitude.max) / 2;
  if (lon > kMaxLongitude) lon = kMaxLongitude;
  if (lon < kMinLongitude) lon = kMinLongitude;
  double lat = (area.latitude.min + area.latitude.max) / 2;
  if (lat > kMaxLatitude) lat = kMaxLatitude;
  if (lat < kMinLatitude) lat = kMinLatitude;
  *longitude = lon;
  *latitude = lat;
}

// geohash_move_x / geohash_move_y: moves one cell east (+1) / west (-1) or north / south,
// wrapping around modulo 2^step. `moving` selects the coordinate's bits (odd = longitude);
// the other coordinate's bits are kept as they are (overflow bits included).
void Move(Cell* cell, uint64_t moving, int direction) {
  const uint64_t other = ~moving;
  uint64_t mine = cell->bits & moving;
  const uint64_t kept = cell->bits & other;
  const int unused = 64 - cell->step * 2;
  // Filling the other coordinate's positions with ones lets a carry / borrow ripple through them.
  const uint64_t fill = other >> unused;
  if (direction > 0) {
    mine = mine + (fill + 1);
  } else {
    mine = (mine | fill) - (fill + 1);
  }
  mine &= moving >> unused;
  cell->bits = mine | kept;
}

inline void MoveLongitude(Cell* cell, int direction) { Move(cell, kOddBits, direction); }
inline void MoveLatitude(Cell* cell, int direction) { Move(cell, kEvenBits, direction); }

// The center cell and its neighbors in membersOfAllNeighbors's order.
enum Direction {
  kCenter,
  kNorth,
  kSouth,
  kEast,
  kWest,
  kNorthEast,
  kNorthWest,
  kSouthEast,
  kSouthWest,
  kCells
};

void Neighbors(const Cell& center, Cell cells[kCells]) {
  struct Offset {
    int lon;
    int lat;
  };
  static constexpr Offset kOffsets[kCells] = {{0, 0}, {0, 1},  {0, -1}, {1, 0},  {-1, 0},
                                              {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  for (int i = 0; i < kCells; ++i) {
    cells[i] = center;
    if (kOffsets[i].lon != 0) MoveLongitude(&cells[i], kOffsets[i].lon);
    if (kOffsets[i].lat != 0) MoveLatitude(&cells[i], kOffsets[i].lat);
  }
}

// geohashEstimateStepsByRadius.
int EstimateSteps(double range_m, double latitude) {
  if (range_m == 0) return kStepMax;
  int step = 1;
  while (range_m < kMercatorMax) {
    range_m *= 2;
    step++;
  }
  step -= 2;
  if (latitude > 66 || latitude < -66) {
    step--;
    if (latitude > 80 || latitude < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

// geohashGetLatDistance: the arc between two latitudes.
inline double LatitudeDistance(double lat1, double lat2) {
  return kEarthRadiusM * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

// geohashGetDistance with the cosines of both latitudes (in radians) given: the same operations
// on the same values, so the same bits, whoever computed the cosines.
inline double DistanceWithCos(double lon1, double lat1, double cos_lat1, double lon2, double lat2,
                              double cos_lat2) {
  const double lon1r = DegToRad(lon1);
  const double lon2r = DegToRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Redis 7.0's shortcut: same longitude, so the arc is along the meridian.
  if (v == 0.0) return LatitudeDistance(lat1, lat2);
  const double lat1r = DegToRad(lat1);
  const double lat2r = DegToRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + cos_lat1 * cos_lat2 * v * v;
  return 2.0 * kEarthRadiusM * std::asin(std::sqrt(a));
}

// geohashCalculateAreasByShapeWGS84 + membersOfAllNeighbors, with sizes in units of `factor`.
std::vector<ScoreRange> Ranges(const Shape& shape, double factor) {
  const bool radius = shape.kind == Shape::Kind::kRadius;
  const double longitude = shape.longitude;
  const double latitude = shape.latitude;

  // geohashBoundingBox.
  const double height = factor * (radius ? shape.radius_m : shape.height_m / 2);
  const double width = factor * (radius ? shape.radius_m : shape.width_m / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusM);
  const double lon_delta_top =
      RadToDeg(width / kEarthRadiusM / std::cos(DegToRad(latitude + lat_delta)));
  const double lon_delta_bottom =
      RadToDeg(width / kEarthRadiusM / std::cos(DegToRad(latitude - lat_delta)));
  const bool southern = latitude < 0;
  const double min_lon = southern ? longitude - lon_delta_bottom : longitude - lon_delta_top;
  const double max_lon = southern ? longitude + lon_delta_bottom : longitude + lon_delta_top;
  const double min_lat = latitude - lat_delta;
  const double max_lat = latitude + lat_delta;

  double radius_m = radius ? shape.radius_m
                           : std::sqrt((shape.width_m / 2) * (shape.width_m / 2) +
                                       (shape.height_m / 2) * (shape.height_m / 2));
  radius_m *= factor;
  int steps = EstimateSteps(radius_m, latitude);

  Cell cells[kCells];
  Area area;
  auto compute = [&] {
    Cell center;
    EncodeCell(kLongitudeRange, kLatitudeRange, longitude, latitude, steps, &center);
    Neighbors(center, cells);
    area = DecodeCell(kLongitudeRange, kLatitudeRange, cells[kCenter]);
  };
  compute();

  // A step that leaves part of the bounding box outside the 3x3 cells is one too fine.
  const Area north = DecodeCell(kLongitudeRange, kLatitudeRange, cells[kNorth]);
  const Area south = DecodeCell(kLongitudeRange, kLatitudeRange, cells[kSouth]);
  const Area east = DecodeCell(kLongitudeRange, kLatitudeRange, cells[kEast]);
  const Area west = DecodeCell(kLongitudeRange, kLatitudeRange, cells[kWest]);
  const bool decrease_step = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                             east.longitude.max < max_lon || west.longitude.min > min_lon;
  if (steps > 1 && decrease_step) {
    steps--;
    compute();
  }

  // Drop the neighbors the bounding box cannot reach.
  if (steps >= 2) {
    if (area.latitude.min < min_lat) {
      cells[kSouth] = cells[kSouthWest] = cells[kSouthEast] = Cell{};
    }
    if (area.latitude.max > max_lat) {
      cells[kNorth] = cells[kNorthEast] = cells[kNorthWest] = Cell{};
    }
    if (area.longitude.min < min_lon) {
      cells[kWest] = cells[kSouthWest] = cells[kNorthWest] = Cell{};
    }
    if (area.longitude.max > max_lon) {
      cells[kEast] = cells[kSouthEast] = cells[kNorthEast] = Cell{};
    }
  }

  // membersOfAllNeighbors: skip dropped cells and a cell equal to the last one scanned. Quirk:
  // "last scanned" index 0 (the center) counts as "none", so a neighbor equal to the center would
  // be scanned again (impossible for step >= 1, kept for fidelity).
  std::vector<ScoreRange> ranges;
  ranges.reserve(kCells);
  int last = 0;
  for (int i = 0; i < kCells; ++i) {
    if (cells[i].IsZero()) continue;
    if (last != 0 && cells[i] == cells[last]) continue;
    const int shift = 52 - cells[i].step * 2;
    ranges.push_back({cells[i].bits << shift, (cells[i].bits + 1) << shift});
    last = i;
  }
  return ranges;
}

bool Within(const Shape& shape, double factor, double longitude, double latitude,
            double* distance_m) {
  if (shape.kind == Shape::Kind::kRadius) {
    const double distance = Distance(shape.longitude, shape.latitude, longitude, latitude);
    if (distance_m != nullptr) *distance_m = distance;
    return !(distance > shape.radius_m * factor);
  }
  // geohashGetDistanceIfInRectangle.
  const double width = shape.width_m * factor;
  const double height = shape.height_m * factor;
  if (LatitudeDistance(latitude, shape.latitude) > height / 2) return false;
  if (Distance(longitude, latitude, shape.longitude, latitude) > width / 2) return false;
  if (distance_m != nullptr) {
    *distance_m = Distance(shape.longitude, shape.latitude, longitude, latitude);
  }
  return true;
}

}  // namespace

bool ValidCoordinates(double longitude, double latitude) {
  if (std::isnan(longitude) || std::isnan(latitude)) return false;
  return !(longitude < kMinLongitude || longitude > kMaxLongitude || latitude < kMinLatitude ||
           latitude > kMaxLatitude);
}

uint64_t Encode(double longitude, double latitude) {
  if (!ValidCoordinates(longitude, latitude)) return 0;
  Cell cell;
  if (!EncodeCell(kLongitudeRange, kLatitudeRange, longitude, latitude, kStepMax, &cell)) {
    return 0;
  }
  return cell.bits << (52 - cell.step * 2);  // geohashAlign52Bits: no shift at step 26.
}

uint64_t ScoreToBits(double score) {
  // gcc's x86-64 code for (uint64_t)score: below 2^63 (or NaN), cvttsd2si; otherwise cvttsd2si of
  // score - 2^63 with the top bit flipped. cvttsd2si yields 0x8000000000000000 for NaN and for
  // anything outside the int64 range.
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = 0x8000000000000000ULL;
  auto truncate = [](double v) -> uint64_t {
    if (!(v > -kTwo63 && v < kTwo63)) return kIndefinite;  // NaN, out of range or -2^63.
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  };
  if (!(score >= kTwo63)) return truncate(score);
  return truncate(score - kTwo63) ^ kIndefinite;
}

ShapeMatcher::ShapeMatcher(const Shape& shape, double unit_factor)
    : shape_(shape),
      radius_m_(shape.radius_m * unit_factor),
      half_width_m_(shape.width_m * unit_factor / 2),
      half_height_m_(shape.height_m * unit_factor / 2),
      latitude_reach_m_(radius_m_ * (1 + 1e-9)),
      cos_latitude_(std::cos(DegToRad(shape.latitude))) {}

bool ShapeMatcher::Within(double longitude, double latitude, double* distance_m) const {
  if (shape_.kind == Shape::Kind::kRadius) {
    if (LatitudeDistance(latitude, shape_.latitude) > latitude_reach_m_) return false;
    const double distance = DistanceWithCos(shape_.longitude, shape_.latitude, cos_latitude_,
                                            longitude, latitude, std::cos(DegToRad(latitude)));
    if (distance_m != nullptr) *distance_m = distance;
    return !(distance > radius_m_);
  }
  // geohashGetDistanceIfInRectangle, with the point's cosine computed once for both distances.
  if (LatitudeDistance(latitude, shape_.latitude) > half_height_m_) return false;
  const double cos_point = std::cos(DegToRad(latitude));
  if (DistanceWithCos(longitude, latitude, cos_point, shape_.longitude, latitude, cos_point) >
      half_width_m_) {
    return false;
  }
  if (distance_m != nullptr) {
    *distance_m = DistanceWithCos(shape_.longitude, shape_.latitude, cos_latitude_, longitude,
                                  latitude, cos_point);
  }
  return true;
}

bool Decode(uint64_t score, double* longitude, double* latitude) {
  const Area area = DecodeCell(kLongitudeRange, kLatitudeRange, Cell{score, kStepMax});
  AreaCenter(area, longitude, latitude);
  return true;
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  return DistanceWithCos(lon1, lat1, std::cos(DegToRad(lat1)), lon2, lat2,
                         std::cos(DegToRad(lat2)));
}

std::string HashString(uint64_t score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double longitude, latitude;
  Decode(score, &longitude, &latitude);
  // Decoded points are always inside the limits, so the re-encoding cannot fail.
  Cell cell;
  EncodeCell(Range{-180, 180}, Range{-90, 90}, longitude, latitude, kStepMax, &cell);
  std::string text(11, '0');
  for (int i = 0; i < 10; ++i) {
    text[static_cast<size_t>(i)] = kAlphabet[(cell.bits >> (52 - (i + 1) * 5)) & 0x1f];
  }
  return text;  // Character 11 would need bits 54..55: Redis always prints '0'.
}

std::vector<ScoreRange> SearchRanges(const Shape& shape) { return Ranges(shape, 1); }

std::vector<ScoreRange> SearchRanges(const Shape& shape, double unit_factor) {
  return Ranges(shape, unit_factor);
}

bool WithinShape(const Shape& shape, double longitude, double latitude, double* distance_m) {
  return Within(shape, 1, longitude, latitude, distance_m);
}

bool WithinShape(const Shape& shape, double unit_factor, double longitude, double latitude,
                 double* distance_m) {
  return Within(shape, unit_factor, longitude, latitude, distance_m);
}

double UnitFactor(std::string_view unit) {
  const size_t nul = unit.find('\0');
  if (nul != std::string_view::npos) unit = unit.substr(0, nul);
  auto equals = [unit](std::string_view name) {
    if (unit.size() != name.size()) return false;
    for (size_t i = 0; i < unit.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(unit[i])) != name[i]) return false;
    }
    return true;
  };
  if (equals("m")) return 1;
  if (equals("km")) return 1000;
  if (equals("ft")) return 0.3048;
  if (equals("mi")) return 1609.34;
  return -1;
}

std::string FormatCoordinate(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[400];  // Enough for "%.17Lf" of any finite double (at most 309 integer digits).
  const int len = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(value));
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return std::string();
  std::string text(buf, static_cast<size_t>(len));
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

std::string FormatDistance(double meters, double unit_factor) {
  const double value = meters / unit_factor;
  if (value == 0) return "0.0000";
  const long long scaled = std::llrint(value * 10000.0);
  std::string text;
  unsigned long long magnitude;
  if (scaled < 0) {
    text.push_back('-');
    magnitude = 0ULL - static_cast<unsigned long long>(scaled);
  } else {
    magnitude = static_cast<unsigned long long>(scaled);
  }
  std::string digits = std::to_string(magnitude);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  text.append(digits, 0, digits.size() - 4);
  text.push_back('.');
  text.append(digits, digits.size() - 4, 4);
  return text;
}

}  // namespace gigakv::geo
