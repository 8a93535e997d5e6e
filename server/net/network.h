// The network facade main() uses: it makes the I/O threads (io_thread.h), the listener
// (listener.h) on the first of them, the SIGINT/SIGTERM handler and the port/bind config applier,
// and runs, stops and joins the threads. Each connection (connection.h) lives on one I/O thread
// and runs its client's commands there; other threads reach it only through its client's outbox
// (client_outbox.h), which posts to that thread.
//
// Threading: Start, Wait and the destructor are called from one thread (main's), Stop from any
// thread (SHUTDOWN runs it on an I/O thread) and more than once. Ownership: the Network owns
// the threads, the listener and, through the threads, the connections; the Server outlives it.
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

  // The port listened on (0 before Start).
  int port() const;

 private:
  void WaitForSignal();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gigakv::server
