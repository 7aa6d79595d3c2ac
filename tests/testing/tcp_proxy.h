// A loopback TCP proxy for tests that cut a network path: Blackhole() stops forwarding and holds
// every connection open without answering (packets dropped, as in a partition), Heal() forwards
// again. Connections made while cut are accepted and left silent.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace allot::testing {

class TcpProxy {
 public:
  // Listens on an ephemeral loopback port and forwards to 127.0.0.1:`target_port`.
  explicit TcpProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~TcpProxy() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    for (std::thread& t : pumps_) t.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }
  void Blackhole() { cut_ = true; }
  void Heal() { cut_ = false; }

 private:
  void Accept() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(mu_);
      pumps_.emplace_back([this, client] { Pump(client); });
    }
  }
  // Forwards both ways until either side closes; while cut, reads nothing and sends nothing, and
  // drops the connection once the proxy heals (its requests were lost).
  void Pump(int client) {
    bool was_cut = cut_;
    int server = -1;
    if (!was_cut) {
      server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) was_cut = true;
    }
    char buf[16384];
    while (!stopping_) {
      if (cut_ || was_cut) {
        if (!cut_) break;  // healed: this connection's traffic was lost
        was_cut = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(p, 2, 100) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(p[i].fd, buf, sizeof buf);
        if (n <= 0 || ::send(p[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) closed = true;
      }
      if (closed) break;
    }
    ::close(client);
    if (server >= 0) ::close(server);
  }

  int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> cut_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::thread acceptor_;
  std::vector<std::thread> pumps_;
};

}  // namespace allot::testing
