#include "agent/run/tenant_uids.h"

#include <sstream>

#include "agent/run/sys_files.h"

namespace allot {

Result<TenantUids> TenantUids::Load(const std::string& file, UidRange range) {
  TenantUids t;
  t.file_ = file;
  t.range_ = range;
  if (!Exists(file)) return t;
  auto text = ReadText(file);
  if (!text) return Err(text.error());
  std::istringstream in(*text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    size_t space = line.find(' ');
    const std::string where = file + ":" + std::to_string(n);
    if (space == std::string::npos || space + 1 >= line.size())
      return Err(InvalidArgument(where + ": expected '<uid> <tenant>', got '" + line + "'"));
    uint64_t uid = 0;
    for (size_t i = 0; i < space; ++i) {
      if (line[i] < '0' || line[i] > '9' || uid > UINT32_MAX)
        return Err(InvalidArgument(where + ": uid '" + line.substr(0, space) + "' is not a number"));
      uid = uid * 10 + static_cast<uint64_t>(line[i] - '0');
    }
    std::string tenant = line.substr(space + 1);
    if (uid < range.base || uid >= uint64_t{range.base} + range.count)
      return Err(InvalidArgument(where + ": uid " + std::to_string(uid) + " is outside " +
                                 std::to_string(range.base) + ".." +
                                 std::to_string(uint64_t{range.base} + range.count - 1)));
    if (t.by_uid_.count(static_cast<uint32_t>(uid)) || t.by_tenant_.count(tenant))
      return Err(InvalidArgument(where + ": uid " + std::to_string(uid) + " or tenant '" + tenant +
                                 "' is assigned twice"));
    t.by_tenant_[tenant] = static_cast<uint32_t>(uid);
    t.by_uid_[static_cast<uint32_t>(uid)] = tenant;
  }
  return t;
}

Result<uint32_t> TenantUids::UidFor(const std::string& tenant) {
  if (tenant.empty() || tenant.find('\n') != std::string::npos)
    return Err(InvalidArgument("tenant '" + tenant + "': expected a non-empty single-line name"));
  if (auto it = by_tenant_.find(tenant); it != by_tenant_.end()) return it->second;
  uint32_t uid = range_.base;
  for (const auto& [used, _] : by_uid_) {  // ascending: the first gap is the lowest free uid
    if (used != uid) break;
    ++uid;
  }
  if (uint64_t{uid} >= uint64_t{range_.base} + range_.count)
    return Err(Status(Code::kResourceExhausted, "all " + std::to_string(range_.count) +
                                                    " tenant uids from " + std::to_string(range_.base) +
                                                    " are assigned (" + file_ + ")"));
  std::string text;
  by_tenant_[tenant] = uid;
  by_uid_[uid] = tenant;
  for (const auto& [u, t] : by_uid_) text += std::to_string(u) + " " + t + "\n";
  if (Status s = ReplaceFile(file_, text, 0644); !s.ok()) {
    by_tenant_.erase(tenant);
    by_uid_.erase(uid);
    return Err(s);
  }
  return uid;
}

}  // namespace allot
