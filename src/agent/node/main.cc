// allot-agent: the node agent. See agent/node/node_agent.h.
#include <CLI/CLI.hpp>

#include <csignal>
#include <fstream>
#include <iostream>

#include "agent/node/node_agent.h"
#include "agent/node/node_labels.h"
#include "agent/nvml.h"
#include "core/version.h"

namespace {
allot::NodeAgent* g_agent = nullptr;
void OnSignal(int) {
  if (g_agent) g_agent->Stop();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace allot;
  CLI::App app{"allot-agent: runs allot's tasks on this node (one agent per node)"};
  app.set_version_flag("--version", std::string("allot-agent ") + kAllotVersion);
  app.footer(
      "Example:\n"
      "  allot-agent --server http://allotd:7070 --token-file /etc/allot/node-token --rack r12 --zone z1 \\\n"
      "              --nvml /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 --work-dir /var/lib/allot-agent\n"
      "A node token: allot tokens create --principal NODE --role node (\"*\" acts for any node).");
  AgentOptions o;
  std::string token_file, nvml = "libnvidia-ml.so.1", sandbox = "auto", scrub, mig_layout;
  app.add_option("--server", o.server, "allotd's URL")->capture_default_str();
  app.add_option("--token", o.token, "a node token (role node)");
  app.add_option("--token-file", token_file,
                 "a file holding this node's token: `allot tokens create --role node --principal NODE` (a token "
                 "for principal '*' acts for every node: for demos and tests only)");
  app.add_option("--ca-cert", o.ca_cert, "PEM CA certificate of an https allotd");
  app.add_option("--node", o.node, "this node's name (default: the host name)");
  app.add_option("--address", o.address, "where tasks reach this node (default: the node name)");
  app.add_option("--rack", o.rack, "the node's rack")->capture_default_str();
  app.add_option("--zone", o.zone, "the node's zone")->capture_default_str();
  std::vector<std::string> labels;
  app.add_option("--label", labels,
                 "a node label NAME=VALUE (repeatable), over those NVML gives (driver, cuda, interconnect); "
                 "jobs and reservations may require it");
  app.add_option("--nvml", nvml, "the NVML library to load")->capture_default_str();
  app.add_option("--work-dir", o.work_dir, "tenants' directories, task logs, MPS state")->capture_default_str();
  app.add_option("--checkpoint-root", o.checkpoint_root,
                 "tasks' checkpoint directories (default: under --work-dir); shared storage lets a job resume on another node");
  std::string pool = "exclusive";
  app.add_option("--pool", pool, "how the GPUs are handed out: exclusive, mig, mps or timeslice")->capture_default_str();
  app.add_option("--mig-layout", mig_layout, "mig pool: each GPU's initial layout, e.g. 3g.40gb,2g.20gb,1g.10gb");
  app.add_option("--cpu", o.cpu, "cores to offer (default: those online)");
  app.add_option("--memory", o.memory, "memory to offer, e.g. 480Gi (default: MemTotal)");
  app.add_option("--sandbox", sandbox,
                 "auto (allot's own when root and allot-init is there, else bubblewrap when found), native, bwrap or none")
      ->capture_default_str();
  app.add_option("--init", o.runner.init_path, "allot-init, the native sandbox's pid 1 (default: beside allot-agent)");
  app.add_option("--scrub", scrub, "shell command run before a GPU or MIG instance passes to another tenant (ALLOT_SCRUB_DEVICES: its UUID; "
                 "not on an MPS or time-sliced GPU another tenant's task still runs on)");
  app.add_option("--check", o.health.commands, "shell command of the node's health check (repeatable; exit 0 passes)");
  app.add_option("--acceptance-command", o.acceptance_commands,
                 "shell command of the diagnostics a booked node runs before a reservation's window, besides its "
                 "health checks (repeatable; exit 0 passes)");
  app.add_option("--max-temperature", o.health.max_temperature_c, "°C above which a GPU fails its check")->capture_default_str();
  app.add_option("--mps-control", o.mps_control, "the MPS control binary")->capture_default_str();
  app.add_option("--mps-pipe-dir", o.mps_pipe_dir,
                 "where each GPU's MPS pipe directory is made (its sockets' paths must fit 107 bytes)")
      ->capture_default_str();
  app.add_option("--network", o.network, "tasks that see the network: gang (multi-task jobs), all or none")->capture_default_str();
  app.add_option("--cgroup-group", o.runner.cgroup_group,
                 "tasks' cgroups are <agent's own cgroup>/GROUP/<task>; distinct per agent when several share a cgroup")
      ->capture_default_str();
  app.add_option("--device-root", o.driver.dev, "where the host's NVIDIA device nodes are (nvidiactl, nvidiaN, nvidia-caps/)")
      ->capture_default_str();
  app.add_option("--proc-driver-root", o.driver.proc_driver, "the NVIDIA driver's proc tree (gpus/, capabilities/, params)")
      ->capture_default_str();
  app.add_option("--storage-root", o.storage_root,
                 "tenants' volumes (a job's mounts:) are <root>/<tenant>/<volume>; none when unset");
  app.add_option("--ldconfig", o.ldconfig, "lists the driver's libraries for image jobs (run with -p)")->capture_default_str();
  app.add_option("--umoci", o.umoci, "unpacks OCI images (oci: and oci-archive: jobs)")->capture_default_str();
  app.add_option("--provision-hook", o.provision_hook,
                 "executable run at the start and end of a reservation window with orchestrator hook "
                 "(docs/dedicated-clusters.md has its contract)");
  app.add_option("--cluster-dir", o.cluster_dir,
                 "dedicated clusters' directories (default <work-dir>/clusters); keep it short: Unix sockets live under it");
  app.add_option("--cluster-listen", o.cluster_listen, "address a dedicated cluster's sshd listens on")->capture_default_str();
  app.add_option("--heartbeat-poll", o.poll_wait_s, "seconds an assignment long poll waits")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  auto fail = [](const std::string& m) {
    std::cerr << "allot-agent: " << m << "\n";
    return 2;
  };
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!(in >> o.token)) return fail("--token-file: cannot read a token from " + token_file);
  }
  if (o.token.empty()) return fail("--token or --token-file: a node token is required");
  for (const std::string& l : labels) {
    auto label = ParseLabelFlag(l);
    if (!label) return fail(label.error().message());
    o.labels.push_back(std::move(*label));
  }
  SortLabels(o.labels);
  if (Status s = CheckLabels("--label", o.labels); !s.ok()) return fail(s.message());
  if (sandbox == "auto") {
    o.runner.sandbox = SandboxMode::kAuto;
  } else if (sandbox == "native") {
    o.runner.sandbox = SandboxMode::kNative;
  } else if (sandbox == "bwrap") {
    o.runner.sandbox = SandboxMode::kBwrap;
  } else if (sandbox == "none") {
    o.runner.sandbox = SandboxMode::kNone;
  } else {
    return fail("--sandbox: '" + sandbox + "': expected auto, native, bwrap or none");
  }
  if (o.network != "gang" && o.network != "all" && o.network != "none") {
    return fail("--network: '" + o.network + "': expected gang, all or none");
  }
  if (o.runner.cgroup_group.empty() || o.runner.cgroup_group.find_first_not_of(
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos ||
      o.runner.cgroup_group[0] == '.') {
    return fail("--cgroup-group: '" + o.runner.cgroup_group + "': expected a name of [A-Za-z0-9._-], not starting with '.'");
  }
  for (auto [flag, value] : {std::pair{"--device-root", &o.driver.dev}, {"--proc-driver-root", &o.driver.proc_driver}})
    if (value->empty() || (*value)[0] != '/') return fail(std::string(flag) + ": '" + *value + "': expected an absolute path");
  if (auto sharing = ParseSharing(pool)) {
    o.pool = *sharing;
  } else {
    return fail("--pool: '" + pool + "': expected exclusive, mig, mps or timeslice");
  }
  for (size_t start = 0; !mig_layout.empty() && start <= mig_layout.size();) {
    size_t comma = mig_layout.find(',', start);
    o.mig_layout.push_back(mig_layout.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!scrub.empty()) o.scrub_command = {"/bin/sh", "-c", scrub};

  NvmlOptions nvml_options;
  nvml_options.library = nvml;
  auto backend = OpenNvml(nvml_options);
  std::unique_ptr<GpuBackend> gpus;
  if (backend) {
    gpus = std::move(*backend);
  } else {
    std::cerr << "allot-agent: " << backend.error().message() << "\n";
  }
  NodeAgent agent(o, std::move(gpus));
  if (Status s = agent.Init(); !s.ok()) return fail(s.message());
  g_agent = &agent;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  Status s = agent.Run();
  g_agent = nullptr;
  if (!s.ok()) return fail(s.message());
  return 0;
}
