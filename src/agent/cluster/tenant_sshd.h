// A tenant's own sshd on one booked node for a dedicated cluster's window (issue 16): the tenant's
// registered public keys (wire/ssh_public_key.h) authorised on a port allotd assigns, revoked at
// tear-down. It is Debian's OpenSSH sshd, run as the tenant's uid and gid rather than root. A
// non-root sshd can log in only its own user and has no privilege to drop or gain, which is the
// isolation wanted: a flaw in sshd is a flaw inside the tenant's own account. The uid needs a
// passwd entry (tenant_user.h).
//
// Its directory is made by Start and removed by Stop; it is the agent's (root, 0711):
//   sshd_config               root 0644       written from the spec; /etc/ssh is not read
//   authorized_keys           root:gid 0640   read by the tenant's sshd, not writable by the
//                                             tenant's tasks (same uid): only registered keys
//   ssh_host_ed25519_key      uid:gid 0600    new at every start
//   ssh_host_ed25519_key.pub  root 0644
//   sshd.pid                  root 0644       the agent's record of the listener (sshd's own
//                                             PidFile would be the tenant's to rewrite)
//   sshd.log                  root:gid 0640   sshd -e: listening, accepted keys, refusals
//
// The sshd outlives this object and the agent, as MPS daemons do: an agent restart does not cut
// the tenant's sessions. Stop, on this object or on a new one for the same spec, ends it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace allot {

struct TenantSshdSpec {
  std::string dir;                  // absolute; made by Start (parents too), removed by Stop
  uid_t uid = 0;                    // the tenant's (agent/run/tenant_uids.h); never root
  gid_t gid = 0;
  std::string user;                 // the uid's passwd name (tenant_user.h): sshd looks it up
  int port = 0;                     // assigned by allotd; 1024..65535 (a non-root sshd binds it)
  std::vector<std::string> authorized_keys;  // OpenSSH public key lines; at least one
  std::string listen = "127.0.0.1";          // an IPv4 or IPv6 address, not a name
  std::string sshd_binary = "/usr/sbin/sshd";  // absolute: sshd re-executes itself per connection
  std::string keygen_binary = "ssh-keygen";
  int64_t start_timeout_ms = 10000;          // to be listening
};

// Pure. InvalidArgument naming the field, the value and what was expected; a key is named by its
// index ("authorized_keys[1]: type 'ssh-dss': expected one of …").
Status CheckTenantSshdSpec(const TenantSshdSpec& spec);

// Pure: the sshd_config Start writes. REQUIRES: CheckTenantSshdSpec(spec) is Ok.
std::string TenantSshdConfig(const TenantSshdSpec& spec);

class TenantSshd {
 public:
  explicit TenantSshd(TenantSshdSpec spec) : spec_(std::move(spec)) {}

  // Checks the spec, the user's passwd entry (its uid and gid must be the spec's) and that the
  // uid can reach `dir`; makes the directory and its files; starts `sshd -D -e -f sshd_config` as
  // the uid; returns once sshd says it listens and a connection to the port is accepted.
  // FailedPrecondition when `dir` exists (an earlier sshd's: Stop it) or the user does not fit;
  // Unavailable, with the tail of sshd's log, when it exits or does not listen in time. Whatever
  // it made is removed again when it fails.
  Status Start();

  // Replaces the authorized keys (atomically: sshd reads the file at each login, so a key taken
  // away no longer logs in and one added does). Sessions already open stay. REQUIRES: started.
  Status SetAuthorizedKeys(const std::vector<std::string>& keys);

  // Revokes, in this order: removes authorized_keys (no key logs in from here on, whatever else
  // fails); stops every process of the sshd — the listener (from memory, or from sshd.pid when it
  // is still this uid's sshd), the per-connection sshds and the sessions below them — then kills
  // them; removes the directory. Ok when there is nothing left to do, so it is safe to call twice.
  // A process a session detached from its tree (double fork) is not found: the booking's
  // tear-down must end the uid's processes on the node.
  Status Stop();

  // The listener this object started and has not stopped, if it still runs.
  bool Running();
  pid_t pid() const { return pid_; }
  std::string KeysPath() const { return spec_.dir + "/authorized_keys"; }
  std::string ConfigPath() const { return spec_.dir + "/sshd_config"; }
  std::string LogPath() const { return spec_.dir + "/sshd.log"; }
  const TenantSshdSpec& spec() const { return spec_; }

 private:
  Status Prepare();
  Status WaitListening();
  Status WriteKeys(const std::vector<std::string>& keys);

  TenantSshdSpec spec_;
  pid_t pid_ = -1;  // our child while it runs; reaped by Stop
};

}  // namespace allot
