// A loopback port for a test's own server (allotd), chosen where no client's port can be:
// below the kernel's ephemeral range (32768-60999 on Debian), which clients' connections and
// servers bound to port 0 draw from. A port from a process id inside that range (as the
// fixtures used) could be taken by a parallel test's client for a moment and allotd then failed
// to bind, a flaky failure in under a second.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

namespace allot::testing {

// Whether a listener could bind 127.0.0.1:`port` now.
inline bool CanBind(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A free port from 20000 to 32767: parallel test processes start at spots spread by their
// process ids, and each call in one process moves on, so two tests rarely probe the same port.
inline int FreeListenPort() {
  constexpr int kLow = 20000, kCount = 12768;
  static std::atomic<int> calls{0};
  const int start = static_cast<int>((static_cast<long>(::getpid()) * 7919) % kCount);
  for (int i = 0; i < kCount; ++i) {
    int port = kLow + (start + 97 * calls++) % kCount;
    if (CanBind(port)) return port;
  }
  return 0;
}

}  // namespace allot::testing
