// ClusterState::Apply for registered SSH keys (state/ssh_key.h). The line was checked by allotd
// (wire/ssh_public_key.h) before the event; here only what would break authorized_keys is refused.
#include <algorithm>

#include "state/cluster_state.h"

namespace allot {

std::vector<std::string> ClusterState::SshKeyLinesOf(TenantId tenant) const {
  std::vector<std::string> out;
  for (const SshKeyRecord& k : ssh_keys_) {
    if (k.tenant == tenant && !k.removed) out.push_back(k.line);
  }
  return out;
}

Status ClusterState::Apply(int64_t now, const SshKeyAdded& e) {
  const SshKeyRecord& in = e.record;
  if (!in.tenant.valid() || in.tenant.value() >= tenants_.size() || in.tenant == tenants_.root()) {
    return InvalidArgument("ssh key: tenant " + std::to_string(in.tenant.value()) + " does not exist");
  }
  if (in.line.empty() || in.line.size() > 8192 ||
      std::any_of(in.line.begin(), in.line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return InvalidArgument("ssh key: line: empty, over 8 KiB or with a control character; expected one key line");
  }
  if (in.fingerprint.empty()) return InvalidArgument("ssh key: fingerprint: empty; expected SHA256:…");
  size_t held = 0;
  for (const SshKeyRecord& k : ssh_keys_) {
    if (k.tenant != in.tenant || k.removed) continue;
    if (k.fingerprint == in.fingerprint) {
      return Conflict("ssh key " + in.fingerprint + " is already registered for tenant '" + tenants_.tenant(in.tenant).path +
                      "' (id " + std::to_string(k.id.value()) + ")");
    }
    ++held;
  }
  if (held >= kMaxSshKeysPerTenant) {
    return Status(Code::kResourceExhausted, "tenant '" + tenants_.tenant(in.tenant).path + "' has " + std::to_string(held) +
                                                " ssh keys, the most it may; remove one first");
  }
  SshKeyRecord k = in;
  k.id = SshKeyId(static_cast<uint32_t>(ssh_keys_.size()));
  k.added_ms = now;
  k.removed = false;
  k.removed_ms = 0;
  ssh_keys_.push_back(std::move(k));
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const SshKeyRemoved& e) {
  if (!e.id.valid() || e.id.value() >= ssh_keys_.size() || ssh_keys_[e.id.value()].removed) {
    return NotFound("ssh key " + std::to_string(e.id.value()) + " does not exist");
  }
  ssh_keys_[e.id.value()].removed = true;
  ssh_keys_[e.id.value()].removed_ms = now;
  return Status::Ok();
}

}  // namespace allot
