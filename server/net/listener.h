// Listening and accepting: the sockets bound to the bind, port and tcp-backlog settings, and
// what happens to each accepted connection. One beyond maxclients gets the max-clients error and
// is closed, as is one from outside the loopback interface under protected mode (protected-mode
// yes, the default bind and no password); every other is handed to the I/O threads round robin
// (IoThread::Adopt).
//
// Threading: the listening sockets belong to the first I/O thread's io_context, and accepting
// runs there. Bind and StartAccepting are called before the threads run; Rebind and Close on
// that first thread. Ownership: the Network owns the listener, destroyed before its IoThreads.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "asio.hpp"
#include "server/net/io_thread.h"
#include "server/server.h"

namespace gigakv::server {

class Listener {
 public:
  // `threads` (non-empty, alive as long as the listener) get the accepted connections; the
  // first of them owns the listening sockets.
  Listener(Server& server, const std::vector<std::unique_ptr<IoThread>>& threads);
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Opens and binds the listening sockets. Addresses prefixed with '-' may fail; "*" and "::*"
  // mean every IPv4 or IPv6 address. With port 0 the first socket gets an ephemeral port and the
  // others the same one. On error the sockets opened so far stay (destroying the listener closes
  // them).
  absl::Status Bind();
  // Starts accepting on every bound socket.
  void StartAccepting();
  // Replaces the listening sockets after CONFIG SET port/bind (`name`). On failure nothing
  // listens until the caller restores the old values and rebinds.
  absl::Status Rebind(std::string_view name);
  // Stops listening (shutdown).
  void Close();
  // On the first thread while a script keeps it busy (its io_context cannot run the accept
  // handlers): accepts the connections waiting on every listening socket, at most a few per
  // call, without waiting.
  void AcceptPending();
  // The port bound, once Bind succeeded.
  int port() const { return bound_port_; }

 private:
  void Accept(asio::ip::tcp::acceptor& acceptor);
  void OnAccepted(IoThread& target, asio::ip::tcp::socket socket);

  Server& server_;
  const std::vector<std::unique_ptr<IoThread>>& threads_;
  std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> acceptors_;
  // Closed acceptors may still have an aborted accept handler queued: they are kept alive.
  std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> retired_acceptors_;
  std::atomic<size_t> next_thread_{0};
  int bound_port_ = 0;
};

}  // namespace gigakv::server
