#include "core/types/inline_value.h"

#include "core/types/hash.h"
#include "core/types/set.h"
#include "core/types/zset.h"

namespace gigakv {

std::unique_ptr<Object> ObjectFromInline(ValueKind kind, std::string_view bytes) {
  switch (kind) {
    case ValueKind::kInlineHash:
      return Hash::FromListpack(bytes);
    case ValueKind::kInlineSet:
      return Set::FromCompact(Set::Encoding::kListpack, bytes);
    case ValueKind::kInlineIntset:
      return Set::FromCompact(Set::Encoding::kIntset, bytes);
    case ValueKind::kInlineZSet:
      return ZSet::FromListpack(bytes);
    default:
      return nullptr;
  }
}

bool InlineFormOf(const Object& object, ValueKind* kind, std::string_view* bytes) {
  switch (object.type()) {
    case KeyType::kHash:
      *kind = ValueKind::kInlineHash;
      *bytes = static_cast<const Hash&>(object).CompactBytes();
      break;
    case KeyType::kSet: {
      const auto& set = static_cast<const Set&>(object);
      *kind = set.encoding() == Set::Encoding::kIntset ? ValueKind::kInlineIntset
                                                       : ValueKind::kInlineSet;
      *bytes = set.CompactBytes();
      break;
    }
    case KeyType::kZSet:
      *kind = ValueKind::kInlineZSet;
      *bytes = static_cast<const ZSet&>(object).CompactBytes();
      break;
    default:
      return false;
  }
  return !bytes->empty() && bytes->size() <= kMaxInlineCollectionBytes;
}

}  // namespace gigakv
