#include "gigakv/key_hash.h"

#include <random>

namespace gigakv {

KeyHashSecret KeyHashSecret::Random() {
  std::random_device device;
  return FromSeed(static_cast<uint64_t>(device()) << 32 | device());
}

const KeyHashSecret& KeyHashSecret::ForProcess() {
  static const KeyHashSecret secret = Random();
  return secret;
}

}  // namespace gigakv
