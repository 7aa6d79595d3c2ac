#include "agent/run/proc_tree.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "agent/run/sys_files.h"

namespace allot {
namespace {

// /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold ')' so the last one ends it.
bool ReadStat(pid_t pid, char* state, pid_t* ppid) {
  auto stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  size_t paren = stat->rfind(')');
  if (paren == std::string::npos || paren + 4 >= stat->size()) return false;
  *state = (*stat)[paren + 2];
  *ppid = static_cast<pid_t>(std::strtol(stat->c_str() + paren + 4, nullptr, 10));
  return true;
}

// Every live process under /proc by its parent (zombies and exiting ones left out).
std::multimap<pid_t, pid_t> LiveByParent() {
  std::multimap<pid_t, pid_t> children;  // parent → child
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0) continue;
      char state = 0;
      pid_t ppid = -1;
      if (ReadStat(static_cast<pid_t>(pid), &state, &ppid) && state != 'Z' && state != 'X')
        children.emplace(ppid, static_cast<pid_t>(pid));
    }
    ::closedir(d);
  }
  return children;
}

}  // namespace

pid_t ParentOf(pid_t pid) {
  char state = 0;
  pid_t ppid = -1;
  return ReadStat(pid, &state, &ppid) ? ppid : -1;
}

std::vector<pid_t> Descendants(pid_t root) {
  const std::multimap<pid_t, pid_t> children = LiveByParent();
  std::vector<pid_t> out;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    pid_t p = frontier.back();
    frontier.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      out.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  return out;
}

bool HasEnv(pid_t pid, const std::string& entry) {
  auto environ = ReadText("/proc/" + std::to_string(pid) + "/environ");
  if (!environ) return false;
  for (size_t start = 0; start < environ->size();) {
    size_t end = environ->find('\0', start);
    if (end == std::string::npos) end = environ->size();
    if (environ->compare(start, end - start, entry) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::vector<pid_t> ProcessesWithEnv(const std::string& entry) {
  std::vector<pid_t> out;
  for (const auto& [parent, pid] : LiveByParent())
    if (HasEnv(pid, entry)) out.push_back(pid);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace allot
