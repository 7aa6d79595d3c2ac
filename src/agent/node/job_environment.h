// A job's own environment on the node (its `image:`, `mounts:`, `env:` and `shm_size:`), turned
// into what the runner launches: the image's root filesystem with the host driver's files bound
// in at their host paths (so a CUDA image talks to this node's kernel driver), the tenant's
// volumes, and the variables, in the order that lets the platform's win.
//
// Volumes live under the operator's --storage-root, one directory per tenant
// (<root>/<tenant path made a file name>/<volume>). A job may mount its own tenant's volumes
// read-write (made on first use, owned by the tenant's uid) and its ancestors' volumes read-only
// (what an org shares with its teams); allotd refuses anything else at submit, and the agent
// refuses it again here, so a node never trusts the control plane alone with another tenant's data.
#pragma once

#include <string>

#include "agent/run/driver_files.h"
#include "agent/run/image_root.h"
#include "agent/run/task_launch.h"
#include "wire/agent_messages.h"

namespace allot {

struct JobEnvironmentContext {
  const DriverFiles* driver = nullptr;  // the host driver's files (bound into image roots)
  std::string storage_root;             // "" : this node offers no volumes
  ImageCache* images = nullptr;
};

// Fills `launch`'s root, binds and shm size from `a`; prepends the image's variables and the
// job's own to `launch.env` (so the platform's, added after, win). Fails naming the field and
// the value: an image the node lacks, a volume of another tenant, a node without volumes.
Status ApplyJobEnvironment(const Assignment& a, const JobEnvironmentContext& ctx, TaskLaunch& launch);

// Whether `tenant` is `owner` or below it ("research/nlp" is below "research").
bool TenantWithin(const std::string& tenant, const std::string& owner);

}  // namespace allot
