// Each tenant's own unprivileged uid (and gid, the same number) on this node, so one tenant's
// task cannot read, signal or write another's. Assignments live in a small file under the agent's
// work root ("<uid> <tenant>" a line), so they survive restarts and never collide: a new tenant
// takes the lowest free uid of the range.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"

namespace allot {

struct UidRange {
  uint32_t base = 200000;   // above any distribution's users, below the 2^31 that some tools dislike
  uint32_t count = 65536;
};

class TenantUids {
 public:
  // Reads `file` if it exists. Refuses a malformed line, a uid outside `range` or given twice.
  static Result<TenantUids> Load(const std::string& file, UidRange range);

  // The tenant's uid, assigning and recording (before returning) a new one on first use.
  // ResourceExhausted when the range is full.
  Result<uint32_t> UidFor(const std::string& tenant);

 private:
  std::string file_;
  UidRange range_;
  std::map<std::string, uint32_t> by_tenant_;
  std::map<uint32_t, std::string> by_uid_;
};

}  // namespace allot
