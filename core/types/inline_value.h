// Conversions between collection objects and the inline collection records of a KeyTable
// (ValueKind::kInlineHash, kInlineSet, kInlineIntset, kInlineZSet). An inline record's payload is
// the entries of the collection's DenseListpack (its buffer without the 8-byte header, which is
// rebuilt by counting them) or the whole buffer of its Intset (see docs/store-format.md), so both
// directions are one malloc and one memcpy. Lists are never stored inline.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "gigakv/object.h"

namespace gigakv {

// A new object holding a copy of an inline record's `bytes`; `kind` must be an inline
// collection kind (IsInlineCollection) and `bytes` a buffer InlineFormOf produced for it.
std::unique_ptr<Object> ObjectFromInline(ValueKind kind, std::string_view bytes);

// The largest buffer stored inline. Inline saves the object and the buffer's malloc headers
// (about 64 bytes a key), which matters for small collections; past this size it is under an
// eighth of the collection while every write of an inline record copies it twice (out to an
// object and back) and moves it within the shard's arena (a hole of its size, compacted later):
// a collection that keeps growing would rewrite its shard's arena on every write.
inline constexpr size_t kMaxInlineCollectionBytes = 512;

// True when `object` can be stored inline: a non-empty hash, set or sorted set still in a
// compact encoding whose buffer is at most kMaxInlineCollectionBytes. Then *kind is its inline
// kind and *bytes its buffer (a view into the object, valid until the object is next mutated or
// freed).
bool InlineFormOf(const Object& object, ValueKind* kind, std::string_view* bytes);

}  // namespace gigakv
