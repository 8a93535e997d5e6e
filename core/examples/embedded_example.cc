// Using gigakv's store in-process, without the server: open, set with and without TTL, read,
// scan and delete.
#include <cstdio>
#include <string>
#include <vector>

#include "gigakv/store.h"

int main() {
  gigakv::Store store;  // 1024 shards, 16 databases, system clock.
  store.Set(0, "greeting", "hello");
  store.Set(0, "session:42", "alice", /*ttl_ms=*/60'000);
  for (int i = 0; i < 5; ++i) store.Set(0, "item:" + std::to_string(i), std::to_string(i * i));

  if (auto value = store.Get(0, "greeting")) std::printf("greeting = %s\n", value->c_str());
  std::printf("session:42 expires in ~%lld s\n",
              static_cast<long long>(store.PttlMs(0, "session:42") / 1000));

  std::vector<std::string> keys;
  uint64_t cursor = 0;
  do {
    cursor = store.Scan(0, cursor, 100, &keys);
  } while (cursor != 0);
  std::printf("%zu keys in db 0 (DbSize says %zu)\n", keys.size(), store.DbSize(0));

  store.Del(0, "greeting");
  std::printf("greeting exists after Del: %s\n", store.Exists(0, "greeting") ? "yes" : "no");
  return 0;
}
