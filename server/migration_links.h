// MIGRATE's connections to other servers, kept open between commands as Redis keeps them
// (cluster.c migrateGetSocket): one per target, named "host:port" exactly as the command wrote
// them; at most kMaxLinks (a new one past that closes one at random); each closed by the cron
// after kIdleSeconds unused; each remembering the database it last SELECTed, so that the next
// MIGRATE to that database sends no SELECT. INFO migrate_cached_sockets counts them.
//
// A link is checked out for the length of one MIGRATE and is out of the cache meanwhile, so two
// MIGRATEs never share a socket: a second MIGRATE to the same target, on another I/O thread,
// opens its own, and whichever is returned last is the one kept. A link that failed is dropped
// (destroyed, which closes it) instead of returned, as Redis's migrateCloseSocket does.
//
// Threading: every member is safe from any thread. Checkout may block its caller up to the
// given timeout while connecting; nothing else blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "client/client.h"

namespace gigakv::server {

class MigrationLinks {
 public:
  static constexpr size_t kMaxLinks = 64;      // MIGRATE_SOCKET_CACHE_ITEMS
  static constexpr int64_t kIdleSeconds = 10;  // MIGRATE_SOCKET_CACHE_TTL

  struct Link {
    client::Client connection;
    int64_t selected_db = -1;  // -1: unknown; the next MIGRATE sends SELECT.
    int64_t last_use_s = 0;
  };

  MigrationLinks() = default;
  MigrationLinks(const MigrationLinks&) = delete;
  MigrationLinks& operator=(const MigrationLinks&) = delete;

  // The cached link to host:port, or a new one connected within timeout_ms (the port is read
  // as C's atoi reads it, as Redis does: "abc" is port 0). The error is the connect failure:
  // NotFound when the host does not resolve, DeadlineExceeded on a timeout, else Unavailable.
  absl::StatusOr<std::unique_ptr<Link>> Checkout(std::string_view host, std::string_view port,
                                                 int64_t timeout_ms, int64_t now_s);
  // Puts a link that worked back under host:port, closing the one it replaces if a concurrent
  // MIGRATE returned one meanwhile, or a random other one when the cache is full.
  void Return(std::string_view host, std::string_view port, std::unique_ptr<Link> link,
              int64_t now_s);
  // Closes every link unused for more than kIdleSeconds (Redis's migrateCloseTimedoutSockets,
  // from its cron).
  void CloseIdle(int64_t now_s);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, std::unique_ptr<Link>> links_;
  uint64_t random_state_ = 0x2545f4914f6cdd1dULL;
};

// Whether argument `index` of the full command `args` is one of MIGRATE's credentials (AUTH
// password, AUTH2 username and password), which the slow log and MONITOR show as "(redacted)":
// those its option parser reached before a KEYS option or a syntax error, as Redis redacts them.
bool IsMigrateCredential(const std::vector<std::string_view>& args, size_t index);

}  // namespace gigakv::server
