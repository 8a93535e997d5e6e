#include "server/net/listener.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gigakv/strings.h"
#include "server/errors.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {
namespace {

using asio::ip::tcp;

constexpr std::string_view kProtectedModeDenied =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the protected "
    "mode option to 'no', and then restarting the server. 3) If you started the server manually "
    "just for testing, restart it with the '--protected-mode no' option. 4) Set up an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

}  // namespace

Listener::Listener(Server& server, const std::vector<std::unique_ptr<IoThread>>& threads)
    : server_(server), threads_(threads) {}

void Listener::StartAccepting() {
  for (auto& acceptor : acceptors_) Accept(*acceptor);
}

void Listener::Close() {
  asio::error_code ec;
  for (auto& acceptor : acceptors_) acceptor->close(ec);
}

void Listener::AcceptPending() {
  constexpr int kMaxPerCall = 16;
  for (auto& acceptor : acceptors_) {
    if (!acceptor->is_open()) continue;
    for (int i = 0; i < kMaxPerCall; ++i) {
      const int fd =
          ::accept4(acceptor->native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;  // EAGAIN: none waiting (other errors: the accept handler sees them).
      asio::error_code ec;
      tcp::socket socket(acceptor->get_executor());
      socket.assign(acceptor->local_endpoint(ec).protocol(), fd, ec);
      if (ec) {
        ::close(fd);
        continue;
      }
      IoThread& target = *threads_[next_thread_.fetch_add(1) % threads_.size()];
      OnAccepted(target, std::move(socket));
    }
  }
}

void Listener::Accept(tcp::acceptor& acceptor) {
  IoThread& target = *threads_[next_thread_.fetch_add(1) % threads_.size()];
  // Accepted on the acceptor's thread (0); the descriptor moves to `target` in OnAccepted.
  acceptor.async_accept([this, &acceptor, &target](const asio::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) OnAccepted(target, std::move(socket));
    Accept(acceptor);
  });
}

void Listener::OnAccepted(IoThread& target, tcp::socket socket) {
  server_.stats().total_connections_received.fetch_add(1, std::memory_order_relaxed);
  asio::error_code ec;
  if (server_.stats().connected_clients.load() >= server_.settings().maxclients.get()) {
    std::string reply = StrCat("-", errors::kMaxClients, "\r\n");
    asio::write(socket, asio::buffer(reply), ec);
    server_.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (server_.settings().protected_mode.get() && server_.config().IsDefaultBind() &&
      !server_.settings().password_set.get()) {
    auto remote = socket.remote_endpoint(ec);
    if (!ec && !remote.address().is_loopback() &&
        !(remote.address().is_v6() && remote.address().to_v6().is_v4_mapped() &&
          asio::ip::make_address_v4(asio::ip::v4_mapped, remote.address().to_v6()).is_loopback())) {
      asio::write(socket, asio::buffer(kProtectedModeDenied), ec);
      server_.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  // Hand the descriptor to `target`, which adds it to its own ready set: from then on
  // only `target`'s thread touches it (see IoThread).
  int fd = socket.release(ec);
  if (ec) return;
  target.Adopt(fd);
}

absl::Status Listener::Rebind(std::string_view name) {
  asio::error_code ec;
  for (auto& acceptor : acceptors_) acceptor->close(ec);
  // Closed acceptors may still have an aborted accept handler queued: keep them alive.
  for (auto& acceptor : acceptors_) retired_acceptors_.push_back(std::move(acceptor));
  acceptors_.clear();
  bound_port_ = 0;
  absl::Status status = Bind();
  if (!status.ok()) {
    acceptors_.clear();
    return absl::UnavailableError(name == "port" ? "Unable to listen on this port"
                                                 : "Failed to bind to specified addresses.");
  }
  for (auto& acceptor : acceptors_) Accept(*acceptor);
  server_.lifecycle().tcp_port = bound_port_;
  spdlog::info("Listening again on port {} ({} changed)", bound_port_, name);
  return absl::OkStatus();
}

absl::Status Listener::Bind() {
  int port = static_cast<int>(server_.settings().port.get());
  int backlog = static_cast<int>(server_.settings().tcp_backlog);
  std::vector<std::string> addresses = SplitNonEmpty(server_.settings().bind.get(), ' ');
  asio::io_context& io = threads_[0]->io;
  for (std::string address : addresses) {
    bool optional = !address.empty() && address[0] == '-';
    if (optional) address.erase(0, 1);
    if (address == "*") address = "0.0.0.0";
    if (address == "::*") address = "::";
    asio::error_code ec;
    asio::ip::address ip = asio::ip::make_address(address, ec);
    if (ec) {
      if (optional) continue;
      return absl::InvalidArgumentError(StrCat("Invalid bind address '", address, "'"));
    }
    auto acceptor = std::make_unique<tcp::acceptor>(io);
    tcp::endpoint endpoint(ip, static_cast<unsigned short>(bound_port_ != 0 ? bound_port_ : port));
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec && ip.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(backlog, ec);
    if (ec) {
      if (optional) continue;
      return absl::UnavailableError(StrCat("Could not create server TCP listening socket ", address,
                                           ":", port, ": ", ec.message()));
    }
    if (bound_port_ == 0) bound_port_ = acceptor->local_endpoint().port();
    acceptors_.push_back(std::move(acceptor));
  }
  if (acceptors_.empty() && port != 0) {
    return absl::UnavailableError("Failed listening on any bind address");
  }
  return absl::OkStatus();
}

}  // namespace gigakv::server
