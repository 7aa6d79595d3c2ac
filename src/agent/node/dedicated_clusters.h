// The node agent's dedicated clusters (issue 16): for each reservation window allotd assigns this
// node (wire/cluster_messages.h), at the window's start the tenant's own sshd with its keys
// (agent/cluster/tenant_sshd.h) and, by the reservation's orchestrator, a private Slurm
// (private_slurm.h) or the operator's provisioning hook (provision_hook.h); at its end, or when
// allotd stops asking (cancelled), all of it torn down. Starts and stops run on a thread of their
// own per cluster (a Slurm takes seconds to come up and its jobs a grace to end), so the agent's
// loop keeps heartbeating; the loop only looks at their outcome.
//
// One Slurm over the window's nodes (agent/cluster/assigned_slurm.h): every booked node's agent
// runs munged with the window's shared key and a slurmd for its own node; the first node's agent
// also runs slurmctld. Each writes the same slurm.conf (every node's address and port, the
// controller's) under its own directory. The controller's agent reports running when every node
// is idle in sinfo; another node's when the controller sees that node idle (sinfo through its
// own SLURM_CONF reaches the controller), so each node's report says whether its own part works.
// At the end the controller's agent signals the jobs and gives them the grace; the others keep
// their slurmd up until their node's jobs are gone (or the controller is), then stop.
//
// On disk, per cluster: <dir>/<key>/cluster.json (the assignment and the uid, written before
// anything starts), sshd/ and slurm/. A restarted agent stops what a previous run left there
// (StopLeftovers): the modules stop from a fresh object, by pid record and SLURM_CONF.
//
// Not thread-safe: the agent's loop calls it.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/cluster/private_slurm.h"
#include "agent/cluster/tenant_sshd.h"
#include "core/status.h"
#include "wire/cluster_messages.h"

namespace allot {

struct DedicatedClusterOptions {
  std::string dir;                 // absolute: <work_dir>/clusters
  std::string node;                // this node's name (the Slurm node's)
  std::string address;             // where tenants reach this node (reported as the ssh host)
  std::string listen = "0.0.0.0";  // the sshd's listen address
  std::string provision_hook;      // the hook orchestrator's executable ("": refused)
  int64_t hook_timeout_ms = 300000;
  int64_t ready_timeout_ms = 30000;  // a private Slurm's nodes must be idle within this
  std::vector<std::string> gpu_files;  // the node's GPU device files (gres File=), by index
  int cpus = 1;
  int64_t memory_mib = 1024;
  std::string path;                // PATH for Slurm's tools and the hook
  // The tenant's uid (the runner's, so a cluster's processes are the tenant's tasks' uid).
  std::function<Result<uint32_t>(const std::string& tenant)> uid_for;
  // The node's task uids (the runner's range): a cluster uid allotd assigns (a multi-node
  // Slurm's, ClusterAssignment::uid) must lie outside it, or it could be another tenant's.
  uint32_t task_uid_base = 200000, task_uid_count = 65536;
  std::function<void(const std::string&)> log;
};

class DedicatedClusters {
 public:
  explicit DedicatedClusters(DedicatedClusterOptions options);
  ~DedicatedClusters();  // waits for starts and stops in flight, then stops every cluster

  // Stops every cluster a previous run left under options.dir; a line for the log.
  std::string StopLeftovers();
  // Starts the clusters of `desired` whose window is open at `now`, stops those past their end or
  // no longer desired, and takes in finished starts and stops.
  void Reconcile(const std::vector<ClusterAssignment>& desired, int64_t now);
  // What runs (or ran a moment ago), for the heartbeat.
  std::vector<ClusterReport> Reports() const;
  // Tenants whose cluster holds this node's GPUs now (for the scrub before another tenant's task).
  std::vector<std::string> TenantsHoldingGpus() const;
  // Stops everything, waiting for it (the agent's exit).
  void StopAll();

 private:
  struct Outcome {
    std::string state;  // running, failed, stopped
    std::string error, login_details, user, ssh_host;
    int ssh_port = 0;
  };
  struct Entry {
    ClusterAssignment a;
    uint32_t uid = 0;
    Outcome shown{"starting", "", "", "", "", 0};
    std::unique_ptr<TenantSshd> sshd;
    std::unique_ptr<PrivateSlurm> slurm;
    bool hook_started = false;
    std::future<Outcome> op;  // a start or a stop in flight
    bool stopping = false;
    int64_t stopped_ms = 0;
  };

  void StartOne(const ClusterAssignment& a);
  void StopOne(Entry& e);
  Outcome Start(Entry& e);   // on e's thread
  Outcome Stop(Entry& e);    // on e's thread
  std::string Dir(const ClusterAssignment& a) const { return options_.dir + "/" + a.key(); }
  void Log(const std::string& line) const;

  DedicatedClusterOptions options_;
  std::map<std::string, Entry> clusters_;  // by key
};

}  // namespace allot
