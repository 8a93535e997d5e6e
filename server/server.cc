#include "server/server.h"

#include <chrono>

#include "server/cycle_clock.h"

namespace gigakv::server {
namespace {

// Calibrates once per process (several Servers may exist in tests).
void CalibrateCycleClockOnce() {
  static const bool calibrated = [] {
    CycleClock::Calibrate();
    return true;
  }();
  (void)calibrated;
}

}  // namespace

void CycleClock::Calibrate() {
  auto start_time = std::chrono::steady_clock::now();
  uint64_t start_ticks = Now();
  while (std::chrono::steady_clock::now() - start_time < std::chrono::milliseconds(5)) {
  }
  uint64_t ticks = Now() - start_ticks;
  double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_time)
          .count();
  if (micros > 0 && ticks > 0) {
    ticks_per_us_ = static_cast<double>(ticks) / micros;
    ns_per_tick_ = 1000.0 / ticks_per_us_;
  }
}

namespace {
// Settings are attached to the config before the keyspace reads its shape from them.
const Settings& Attached(Settings& settings, Config& config) {
  settings.Attach(config);
  return settings;
}
}  // namespace

Server::Server(Config& config, ServerOptions options)
    : config_(config),
      keyspace_(Attached(settings_, config_), options.clock),
      aof_(settings_, keyspace_, snapshots_, dispatcher_,
           options.file_system != nullptr ? options.file_system : persistence::PosixFileSystem()) {
  CalibrateCycleClockOnce();
  auto configure_notifications = [this] {
    // The text as CONFIG GET prints it, and 'n' (which Redis hides next to 'A').
    std::string flags = config_.Get("notify-keyspace-events");
    if (config_.GetInt("notify-keyspace-events") != 0) flags += 'n';
    notifier_.Configure(flags);
  };
  configure_notifications();
  config_.AddApplier([this, configure_notifications](std::string_view name) {
    if (name == "notify-keyspace-events") configure_notifications();
    if (name != "appendonly") return absl::OkStatus();
    // As Redis: on, a base of the live dataset first (in the background); off, fsynced and
    // closed now.
    if (settings_.appendonly.get() && !aof_.enabled()) return aof_.Enable();
    if (!settings_.appendonly.get() && aof_.enabled()) aof_.Close();
    return absl::OkStatus();
  });
}

Server::~Server() = default;

bool Server::ActiveExpire() {
  if (clients_.Paused()) return false;  // Redis pauses it too.
  // The cron runs this in a batch scope: an EXEC waiting for it (and every I/O thread waiting
  // behind that EXEC) gets in after one round; the cron comes back within a millisecond.
  return keyspace_.ActiveExpire([this] { return transaction_gate_.exec_waiting(); });
}

bool Server::Cron() {
  // A pause that ran out stops costing commands a clock read, and keys expire again.
  clients_.ForgetEndedPause();
  // Part of Redis's expiry cycle, which a pause skips whole.
  if (!clients_.Paused()) keyspace_.SampleStaleKeys();
  bool expiry_backlog = keyspace_.active_expire_enabled() && ActiveExpire();
  keyspace_.UsedMemory(/*refresh=*/true);
  keyspace_.RefreshCoarseClock();
  // Also evict when no command arrives; as Redis, not during a pause.
  if (!clients_.Paused()) keyspace_.EvictToLimit();
  stats_.SampleRates(keyspace_.NowMs());
  snapshots_.Cron();
  tracking_.EnforceLimit(settings_.tracking_table_max_keys.get());
  tracking_.FlushBroadcasts();  // Keys that expired or were evicted.
  aof_.Cron();
  migration_links_.CloseIdle(keyspace_.NowMs() / 1000);
  return expiry_backlog;
}

}  // namespace gigakv::server
