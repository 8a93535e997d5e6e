// Values that do not live inline in a shard's arena: the base of every collection type, and the
// value kinds a record can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"

namespace gigakv {

// Redis's key types, as TYPE reports them.
enum class KeyType : uint8_t { kString, kList, kSet, kZSet, kHash, kStream };

std::string_view KeyTypeName(KeyType type);

// How a record stores its value.
enum class ValueKind : uint8_t {
  kStringInt = 0,       // Inline decimal text of an int64 ("int" encoding).
  kStringEmbstr = 1,    // Inline bytes, at most 44 of them ("embstr").
  kStringRaw = 2,       // Inline bytes ("raw").
  kStringExternal = 3,  // Heap std::string owned by the record ("raw"); for large values.
  kObject = 4,          // Heap Object owned by the record (collections).
  // Small collections in their compact encoding, stored inline as the entries of their
  // DenseListpack or the buffer of their Intset (see docs/store-format.md). They have no Object
  // while stored; the command layer builds one from the bytes when a command needs it.
  kInlineHash = 5,    // A hash's listpack (OBJECT ENCODING "listpack").
  kInlineSet = 6,     // A set's listpack ("listpack").
  kInlineIntset = 7,  // A set's intset ("intset").
  kInlineZSet = 8,    // A sorted set's listpack ("listpack").
};

// True for the kinds whose payload is bytes in the record (strings and inline collections).
inline bool IsInlineKind(ValueKind kind) {
  return kind != ValueKind::kStringExternal && kind != ValueKind::kObject;
}
// True for the inline collection kinds (kInlineHash..kInlineZSet).
inline bool IsInlineCollection(ValueKind kind) { return kind >= ValueKind::kInlineHash; }
// The key type of an inline collection kind (kString for the other kinds).
inline KeyType InlineCollectionType(ValueKind kind) {
  switch (kind) {
    case ValueKind::kInlineHash:
      return KeyType::kHash;
    case ValueKind::kInlineSet:
    case ValueKind::kInlineIntset:
      return KeyType::kSet;
    case ValueKind::kInlineZSet:
      return KeyType::kZSet;
    default:
      return KeyType::kString;
  }
}

// When collections convert from their compact encoding to the full one (Redis's
// *-max-listpack-* / set-max-intset-entries directives). Conversions go one way: a collection
// never converts back to the compact encoding when it shrinks (as in Redis).
struct CollectionLimits {
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t set_max_listpack_entries = 128;
  int64_t set_max_listpack_value = 64;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  // > 0: at most this many entries per list node; -1..-5: at most 4/8/16/32/64 KiB per node.
  int64_t list_max_listpack_size = -2;
};

// A collection value referenced from a record. Owned by exactly one record; deleted when the
// record is erased or overwritten. Accessed only under its shard's lock.
class Object {
 public:
  virtual ~Object() = default;
  virtual KeyType type() const = 0;
  // OBJECT ENCODING's name for the current representation ("listpack", "hashtable", ...).
  virtual std::string_view encoding_name() const = 0;
  // Bytes of heap this object holds, for used_memory and MEMORY USAGE.
  virtual size_t MemoryUsage() const = 0;
  // Elements it holds (for lazy-free decisions and INFO).
  virtual size_t Length() const = 0;
  // A deep copy (COPY). The caller owns the result.
  virtual Object* Clone() const = 0;
  // Calls fn with each element in the type's natural order: lists head to tail, sets in any
  // order, sorted sets by ascending score (members only), hashes field by field (fields only).
  // Used by SORT and other generic walkers. fn must not modify the object.
  virtual void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const = 0;
};

}  // namespace gigakv
