#include "agent/cluster/slurm_conf.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/names.h"

namespace allot {
namespace {

constexpr size_t kMaxClusterName = 40;  // Slurm's limit on ClusterName
constexpr size_t kMaxSocketPath = 107;  // sockaddr_un's sun_path, less its NUL

Status Invalid(const std::string& field, const std::string& value, const std::string& why,
               const std::string& expected) {
  return InvalidArgument(field + ": '" + EscapeText(value) + "' " + why + "; expected " + expected);
}

// ClusterName (and the partition's name): Slurm lowercases it, so only lowercase is accepted.
Status CheckCluster(const std::string& cluster) {
  constexpr const char* kExpected = "1 to 40 of a-z 0-9 _ -, starting with a letter";
  bool ok = !cluster.empty() && cluster.size() <= kMaxClusterName && cluster[0] >= 'a' && cluster[0] <= 'z';
  for (char c : cluster) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
  return ok ? Status::Ok() : Invalid("cluster", cluster, "is not valid", kExpected);
}

// A path written into slurm.conf or gres.conf: absolute, and nothing those files read specially
// (a space or '#' ends a value, '%' is expanded in some keys, '=' and quotes split them).
Status CheckConfPath(const std::string& field, const std::string& path) {
  constexpr const char* kExpected = "an absolute path without spaces, control characters, '#', '%', '=' or quotes";
  if (path.empty() || path[0] != '/') return Invalid(field, path, "is not absolute", kExpected);
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == '#' || c == '%' || c == '=' || c == '"' || c == '\'')
      return Invalid(field, path, "holds a character slurm.conf reads specially", kExpected);
  }
  if (path == "/") return Invalid(field, path, "is the root directory", "a directory of the cluster's own");
  return Status::Ok();
}

// NodeAddr, SlurmctldHost's address: a host name, IPv4 or IPv6 address; nothing slurm.conf reads
// specially, and no list (',') or host range ('[').
Status CheckAddress(const std::string& field, const std::string& address) {
  constexpr const char* kExpected = "a host name or IP address (letters, digits, '.', '-', ':')";
  bool ok = !address.empty() && address.size() <= 253;
  for (char c : address) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':');
  return ok ? Status::Ok() : Invalid(field, address, "is not an address", kExpected);
}

Status CheckPort(const std::string& field, int port) {
  if (port >= 1 && port <= 65535) return Status::Ok();
  return Invalid(field, std::to_string(port), "is not a port", "1 to 65535");
}

// The largest memory per CPU every node can give: a job that names no memory gets this much
// per CPU, so jobs share a node instead of each taking all of its memory (CR_Core_Memory's
// default).
int64_t DefMemPerCpu(const PrivateSlurmSpec& spec) {
  int64_t m = spec.nodes.front().memory_mib / spec.nodes.front().cpus;
  for (const PrivateSlurmNode& n : spec.nodes) m = std::min(m, n.memory_mib / n.cpus);
  return std::max<int64_t>(m, 1);
}

}  // namespace

std::string MungeSocketPath(const PrivateSlurmSpec& spec) { return spec.dir + "/munge-socket/sock"; }

Status CheckPrivateSlurmSpec(const PrivateSlurmSpec& spec) {
  if (Status s = CheckCluster(spec.cluster); !s.ok()) return s;
  if (Status s = CheckConfPath("dir", spec.dir); !s.ok()) return s;
  if (spec.uid == 0)
    return Invalid("uid", "0", "is root", "the tenant's own unprivileged uid (it runs munged and slurmctld)");
  if (spec.gid == 0) return Invalid("gid", "0", "is root's group", "the tenant's own group");
  if (Status s = CheckName("user", spec.user); !s.ok()) return s;
  if (Status s = CheckPort("controller_port", spec.controller_port); !s.ok()) return s;
  if (Status s = CheckAddress("controller_address", spec.controller_address); !s.ok()) return s;
  if (spec.nodes.empty()) return Invalid("nodes", "[]", "is empty", "at least one node");
  if (spec.controller_remote && std::all_of(spec.nodes.begin(), spec.nodes.end(), [](auto& n) { return n.remote; }))
    return Invalid("nodes", "all remote", "with controller_remote leaves nothing to run here", "a node of this host");
  if (!spec.munge_key.empty() && (spec.munge_key.size() < 32 || spec.munge_key.size() > 1024)) {
    return Invalid("munge_key", std::to_string(spec.munge_key.size()) + " bytes", "is not a munge key's size",
                   "32 to 1024 bytes (or none: a fresh key)");
  }
  const bool one_host = !spec.controller_remote && std::none_of(spec.nodes.begin(), spec.nodes.end(), [](auto& n) { return n.remote; });
  if (spec.munge_key.empty() && !one_host)
    return Invalid("munge_key", "", "is empty for a cluster over several hosts", "the cluster's shared key");
  if (MungeSocketPath(spec).size() > kMaxSocketPath) {
    return Invalid("dir", spec.dir, "is " + std::to_string(spec.dir.size()) + " bytes long",
                   "a shorter path: munged's socket " + MungeSocketPath(spec).substr(spec.dir.size()) +
                       " under it must fit a Unix socket's " + std::to_string(kMaxSocketPath) + " bytes");
  }

  std::map<int, std::string> ports = {{spec.controller_port, "controller_port"}};
  std::map<std::string, std::string> names, files;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const PrivateSlurmNode& n = spec.nodes[i];
    const std::string at = "nodes[" + std::to_string(i) + "]";
    if (Status s = CheckName(at + ".name", n.name); !s.ok()) return s;
    if (auto [it, fresh] = names.emplace(n.name, at); !fresh)
      return Invalid(at + ".name", n.name, "is also " + it->second + "'s name", "a name of its own");
    // slurmstepd listens on SlurmdSpoolDir/<node>_<job>.<step>, both ids up to 10 digits.
    const std::string step_socket = "/spool/" + n.name + "/" + n.name + "_4294967294.4294967294";
    if (spec.dir.size() + step_socket.size() > kMaxSocketPath) {
      return Invalid(at + ".name", n.name, "makes a socket path of " + std::to_string(spec.dir.size() + step_socket.size()) + " bytes",
                     "a shorter name or dir: slurmstepd's socket DIR" + step_socket + " must fit a Unix socket's " +
                         std::to_string(kMaxSocketPath) + " bytes");
    }
    if (Status s = CheckPort(at + ".port", n.port); !s.ok()) return s;
    if (Status s = CheckAddress(at + ".address", n.address); !s.ok()) return s;
    if (n.remote && !n.gpu_files.empty()) {
      return Invalid(at + ".gpu_files", std::to_string(n.gpu_files.size()) + " files", "are another host's (remote)",
                     "none: that host's gres.conf names them");
    }
    if (auto [it, fresh] = ports.emplace(n.port, at + ".port"); !fresh)
      return Invalid(at + ".port", std::to_string(n.port), "is also " + it->second, "a port of its own");
    if (n.cpus < 1) return Invalid(at + ".cpus", std::to_string(n.cpus), "is too few", "1 or more");
    if (n.memory_mib < 1) return Invalid(at + ".memory_mib", std::to_string(n.memory_mib), "is too little", "1 or more");
    if (n.gpus < 0) return Invalid(at + ".gpus", std::to_string(n.gpus), "is negative", "0 or more");
    if (!n.remote && n.gpu_files.size() != static_cast<size_t>(n.gpus)) {
      return Invalid(at + ".gpu_files", std::to_string(n.gpu_files.size()) + " files",
                     "does not match gpus " + std::to_string(n.gpus), "one device file per GPU");
    }
    for (size_t k = 0; k < n.gpu_files.size(); ++k) {
      const std::string field = at + ".gpu_files[" + std::to_string(k) + "]";
      if (Status s = CheckConfPath(field, n.gpu_files[k]); !s.ok()) return s;
      if (auto [it, fresh] = files.emplace(n.gpu_files[k], field); !fresh)
        return Invalid(field, n.gpu_files[k], "is also " + it->second, "each GPU's own device file");
    }
  }
  return Status::Ok();
}

Result<std::string> SlurmConf(const PrivateSlurmSpec& spec) {
  if (Status s = CheckPrivateSlurmSpec(spec); !s.ok()) return Err(s);
  const std::string& d = spec.dir;
  std::string t;
  auto line = [&t](const std::string& text) { t += text + "\n"; };
  line("# A tenant's private Slurm, written by allot-agent (src/agent/cluster/slurm_conf.cc).");
  line("ClusterName=" + spec.cluster);
  line("SlurmctldHost=localhost(" + spec.controller_address + ")");
  line("SlurmctldPort=" + std::to_string(spec.controller_port));
  line("SlurmUser=" + spec.user);
  line("SlurmdUser=root");
  line("AuthType=auth/munge");
  line("CredType=cred/munge");
  line("AuthInfo=socket=" + MungeSocketPath(spec));
  line("StateSaveLocation=" + d + "/ctld");
  line("SlurmctldPidFile=" + d + "/ctld/slurmctld.pid");
  line("SlurmdSpoolDir=" + d + "/spool/%n");
  line("SlurmdPidFile=" + d + "/spool/%n/slurmd.pid");
  line("SlurmdParameters=config_overrides");
  line("DebugFlags=NO_CONF_HASH");
  line("ProctrackType=proctrack/linuxproc");
  line("TaskPlugin=task/none");
  line("JobAcctGatherType=jobacct_gather/none");
  line("AccountingStorageType=accounting_storage/none");
  line("JobCompType=jobcomp/none");
  line("MpiDefault=none");
  line("MailProg=/bin/true");
  line("PropagateResourceLimits=NONE");
  line("ReturnToService=2");
  line("SelectType=select/cons_tres");
  line("SelectTypeParameters=CR_Core_Memory");
  line("DefMemPerCPU=" + std::to_string(DefMemPerCpu(spec)));
  line("GresTypes=gpu");
  std::string names;
  for (const PrivateSlurmNode& n : spec.nodes) {
    std::string node = "NodeName=" + n.name + " NodeHostname=localhost NodeAddr=" + n.address + " Port=" +
                       std::to_string(n.port) + " CPUs=" + std::to_string(n.cpus) +
                       " RealMemory=" + std::to_string(n.memory_mib);
    if (n.gpus > 0) node += " Gres=gpu:" + std::to_string(n.gpus);
    line(node + " State=UNKNOWN");
    names += (names.empty() ? "" : ",") + n.name;
  }
  line("PartitionName=" + spec.cluster + " Nodes=" + names + " Default=YES MaxTime=INFINITE State=UP");
  return t;
}

Result<std::string> GresConf(const PrivateSlurmSpec& spec) {
  if (Status s = CheckPrivateSlurmSpec(spec); !s.ok()) return Err(s);
  // One line per device file: a File= list would be read as a host-list expression.
  std::string t = "# This host's nodes' GPU device files (src/agent/cluster/slurm_conf.cc).\n";
  for (const PrivateSlurmNode& n : spec.nodes)
    for (const std::string& f : n.gpu_files) t += "NodeName=" + n.name + " Name=gpu File=" + f + "\n";
  return t;
}

}  // namespace allot
