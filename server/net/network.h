// Networking: one asio::io_context per I/O thread, a listener that spreads accepted connections
// across the threads round robin, and the connection that reads requests, runs every complete
// command in the buffer and writes all their replies with one write.
//
// Threading: a connection lives on one I/O thread for its whole life; its handlers never run
// concurrently. Other threads reach it only through its client's outbox (client_outbox.h),
// which posts to its thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "server/server.h"

namespace gigakv::server {

class Network {
 public:
  explicit Network(Server& server);
  ~Network();

  // Binds the configured addresses and starts the I/O threads. On error nothing is left running.
  absl::Status Start();
  // Blocks until Stop() (or a shutdown request) and all threads have ended.
  void Wait();
  // Stops accepting, closes connections and ends the threads. Thread-safe, idempotent.
  void Stop();

  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gigakv::server
