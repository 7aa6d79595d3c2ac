// The node's health checks. Built in: what NVML reports for each GPU — lost, uncorrected ECC
// errors, retired pages or row remaps pending or failed, Xid errors, temperature. Configured:
// commands (dcgmi diag, an NCCL test) that pass when they exit 0. Each failure is classed:
//   software — a reset fixes it (Xids of driver/firmware state, a row remap pending): the agent
//              resets the GPUs' MIG layout and checks again;
//   hardware — the node needs repair (uncorrected ECC, a GPU off the bus, NVLink errors, a
//              failed remap, over-temperature, a failed diagnostic).
// Xids caused by the application (13, 31, 43, 45: its own faults or its termination) are not the
// node's and are left out.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/gpu_backend.h"
#include "wire/agent_messages.h"

namespace allot {

struct HealthOptions {
  unsigned max_temperature_c = 90;
  // Shell commands run by /bin/sh -c; a non-zero exit (or a timeout) fails the node (hardware).
  std::vector<std::string> commands;
  int64_t command_timeout_ms = 600000;
};

// The built-in checks over one telemetry sample, one HealthCheck per kind ("nvml.ecc", …).
std::vector<HealthCheck> NvmlChecks(const std::vector<GpuSample>& samples, const HealthOptions& options);

// How one Xid is classed: "" (the application's), "software" or "hardware".
const char* XidSeverity(uint64_t xid);

// The configured commands, each as "cmd:<command>", run one after another.
std::vector<HealthCheck> CommandChecks(const HealthOptions& options);

}  // namespace allot
