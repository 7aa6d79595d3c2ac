// What the dedicated-cluster end-to-end tests (agent_e2e_dedicated*_test.cc) share: the wall
// clock a booking's window is set by, a shell command's output, whether a loopback port listens,
// and the parts of a reservation's `access` they read.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace allot::testing {

// allotd's --cluster-port-base for a test: apart from the other tests' agents running at once
// (8 ports for each pid: a two-node cluster takes 6), and below 32768, where Linux's ephemeral
// ports begin (an outgoing connection of any test may hold one of those: an sshd once found its
// port taken so).
inline int ClusterPortBase() { return 20000 + static_cast<int>(::getpid() % 1500) * 8; }

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first whole second at least `ms` from now: a booking's times travel as RFC 3339 to the
// second, so a window booked at a fraction would open and close up to 999 ms before the test's
// own figure (and the teardown, prompt since the pass gap shrank, lands inside that gap).
inline int64_t WholeSecondFromNow(int64_t ms) { return (WallMs() + ms + 999) / 1000 * 1000; }

// stdout and stderr of `sh -c command`.
inline std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

inline bool Listening(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// The reservation's access entry of `node` (the first one when `node` is empty), or {}.
inline nlohmann::json AccessOf(const nlohmann::json& reservation, const std::string& node = "") {
  for (const nlohmann::json& a : reservation.value("access", nlohmann::json::array())) {
    if (node.empty() || a.value("node", "") == node) return a;
  }
  return nlohmann::json::object();
}

}  // namespace allot::testing
