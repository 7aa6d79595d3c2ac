#include "agent/run/sys_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>
#include <chrono>

namespace allot {

std::string ErrnoText(int err) {
  char buf[128];
  // GNU strerror_r returns the message, possibly not in buf.
  return std::string(strerror_r(err, buf, sizeof buf));
}

Result<std::string> ReadText(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Err(Unavailable("reading " + path + ": " + ErrnoText(errno)));
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Err(Unavailable("reading " + path + ": " + ErrnoText(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status WriteText(const std::string& path, const std::string& text, IfMissing missing) {
  int flags = O_WRONLY | O_CLOEXEC | O_TRUNC;
  if (missing == IfMissing::kCreate) flags |= O_CREAT;
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return Unavailable("writing '" + text + "' to " + path + ": " + ErrnoText(errno));
  ssize_t n;
  do n = ::write(fd, text.data(), text.size());
  while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  if (n < 0) return Unavailable("writing '" + text + "' to " + path + ": " + ErrnoText(err));
  if (static_cast<size_t>(n) != text.size())
    return Unavailable("writing '" + text + "' to " + path + ": short write");
  return Status::Ok();
}

Status ReplaceFile(const std::string& path, const std::string& text, mode_t mode) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Unavailable("creating " + tmp + ": " + ErrnoText(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Unavailable("writing " + tmp + ": " + ErrnoText(err));
    }
    done += static_cast<size_t>(n);
  }
  // umask may have narrowed the mode; the reader (a task under another uid) needs it as asked.
  ::fchmod(fd, mode);
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Unavailable("renaming " + tmp + " to " + path + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<pid_t> ReadPids(const std::string& procs_path) {
  std::vector<pid_t> pids;
  auto text = ReadText(procs_path);
  if (!text) return pids;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    if (end > at) pids.push_back(static_cast<pid_t>(std::stol(text->substr(at, end - at))));
    at = end + 1;
  }
  return pids;
}

int64_t WallMillis() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void SleepMillis(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace allot
