// ClusterState: inference services (state/service.h). A replica is an ordinary job linked to its
// service; these events create, restart, remove and re-template them. The reconciler
// (scheduler/service_reconciler.h) decides when.
#include <algorithm>

#include "state/cluster_state.h"
#include "state/share_request.h"

namespace allot {

ServiceId ClusterState::FindService(TenantId tenant, std::string_view name) const {
  for (const Service& s : services_) {
    if (!s.deleted && s.spec.tenant == tenant && s.spec.name == name) return s.id;
  }
  return ServiceId();
}

Result<Service*> ClusterState::MutableService(ServiceId id) {
  if (!id.valid() || id.value() >= services_.size()) {
    return Err(NotFound("service id " + std::to_string(id.value()) + " does not exist"));
  }
  Service& s = services_[id.value()];
  if (s.deleted) return Err(FailedPrecondition("service '" + s.spec.name + "' is deleted"));
  return &s;
}

void ClusterState::LinkReplica(JobId job, ServiceId service) {
  if (service_of_job_.size() <= job.value()) service_of_job_.resize(job.value() + 1);
  service_of_job_[job.value()] = service;
}

void ClusterState::RebuildServices() {
  service_of_job_.assign(jobs_.size(), ServiceId());
  for (const Service& s : services_) {
    for (const ServiceReplica& r : s.replicas) service_of_job_[r.job.value()] = s.id;
  }
}

Status ClusterState::Apply(int64_t now, const ServiceCreated& e) {
  const ServiceSpec& s = e.spec;
  if (s.name.empty() || s.name.size() > kMaxServiceNameLength) {
    return InvalidArgument("service name: '" + s.name + "' must be 1 to " + std::to_string(kMaxServiceNameLength) +
                           " characters (its replicas are named NAME-r<k>)");
  }
  if (!s.tenant.valid() || s.tenant.value() >= tenants_.size() || s.tenant == tenants_.root() ||
      tenants_.tenant(s.tenant).removed) {
    return NotFound("service '" + s.name + "' tenant: does not exist");
  }
  if (FindService(s.tenant, s.name).valid()) {
    return Conflict("service '" + s.name + "' already exists in tenant '" + tenants_.tenant(s.tenant).path + "'");
  }
  if (Status c = s.Check(); !c.ok()) return c;
  JobSpec probe = s.replica;
  probe.name = s.name + "-r0";
  probe.tenant = s.tenant;
  if (Status r = probe.CheckRanges(); !r.ok()) return r;
  if (probe.TotalDemand().gpu > 0 && (probe.gpu_resource < kFirstGpu || probe.gpu_resource >= names_.size())) {
    return InvalidArgument("service '" + s.name + "' tasks.gpu_model: no GPU model of the fleet is named");
  }
  if (Status r = ResolveShares(probe, fleet_, names_, AllowedPools(s.tenant)); !r.ok()) return r;
  Service v;
  v.id = ServiceId(static_cast<uint32_t>(services_.size()));
  v.spec = s;
  v.templates.push_back(s.replica);
  v.desired = s.autoscaled() ? std::clamp(s.replicas, s.min_replicas, s.max_replicas) : s.replicas;
  v.created_ms = now;
  services_.push_back(std::move(v));
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ServiceReplicaAdded& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  if (e.revision < 1 || static_cast<size_t>(e.revision) > v.templates.size()) {
    return InvalidArgument("service '" + v.spec.name + "' replica: revision " + std::to_string(e.revision) + " does not exist");
  }
  if (e.slot < v.next_slot) {
    return InvalidArgument("service '" + v.spec.name + "' replica: slot " + std::to_string(e.slot) + " was used before");
  }
  if (e.port < 1 || e.port > 65535) {
    return InvalidArgument("service '" + v.spec.name + "' replica: port " + std::to_string(e.port) + "; expected 1 to 65535");
  }
  if (e.spec.tenant != v.spec.tenant) return InvalidArgument("service '" + v.spec.name + "' replica: another tenant's job");
  if (Status s = Apply(now, JobSubmitted{e.spec}); !s.ok()) return s;
  JobId job = JobId(static_cast<uint32_t>(jobs_.size() - 1));
  v.replicas.push_back({e.slot, job, e.revision, e.port, 0, 0, ""});
  v.next_slot = e.slot + 1;
  LinkReplica(job, v.id);
  return Status::Ok();
}

namespace {

ServiceReplica* FindReplica(Service& v, JobId job) {
  for (ServiceReplica& r : v.replicas) {
    if (r.job == job) return &r;
  }
  return nullptr;
}

}  // namespace

const ServiceReplica* Service::ReplicaOf(JobId job) const {
  for (const ServiceReplica& r : replicas) {
    if (r.job == job) return &r;
  }
  return nullptr;
}

Status ClusterState::Apply(int64_t now, const ServiceReplicaRestarted& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  ServiceReplica* r = FindReplica(v, e.job);
  if (!r) return NotFound("service '" + v.spec.name + "': job " + std::to_string(e.job.value()) + " is not one of its replicas");
  Job& j = jobs_[e.job.value()];
  if (j.state != JobState::kFailed && j.state != JobState::kFinished) {
    return FailedPrecondition("replica '" + j.spec.name + "' has not ended (" + JobStateName(j.state) + ")");
  }
  // The ended run stays counted (usage, metering) as a run that ended; the job queues again.
  bool healthy = j.finished_ms - j.last_started_ms >= kBackoffResetMs;
  r->crashes = (healthy ? 0 : r->crashes) + 1;
  r->restarts += 1;
  r->last_exit = j.state == JobState::kFinished ? "exited with code 0" : j.reason;
  j.ended_runs.push_back({j.last_started_ms, j.finished_ms, j.admission, OnAgents(j)});
  j.state = JobState::kPending;
  j.finished_ms = -1;
  j.queued_ms = now;
  j.reason = e.reason;
  AddPending(j);
  v.replaced += 1;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ServiceReplicaRemoved& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  if (!FindReplica(v, e.job)) {
    return NotFound("service '" + v.spec.name + "': job " + std::to_string(e.job.value()) + " is not one of its replicas");
  }
  Job& j = jobs_[e.job.value()];
  if (j.state == JobState::kPending || j.holds_resources()) {
    if (Status s = Apply(now, JobCancelled{e.job}); !s.ok()) return s;
    j.reason = e.why;
  }
  std::erase_if(v.replicas, [&](const ServiceReplica& r) { return r.job == e.job; });
  service_of_job_[e.job.value()] = ServiceId();
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ServiceScaled& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  int32_t lo = v.spec.autoscaled() ? v.spec.min_replicas : 0;
  int32_t hi = v.spec.autoscaled() ? v.spec.max_replicas : kMaxServiceReplicas;
  if (e.desired < lo || e.desired > hi) {
    return InvalidArgument("service '" + v.spec.name + "' replicas: " + std::to_string(e.desired) + "; expected " +
                           std::to_string(lo) + " to " + std::to_string(hi));
  }
  v.desired = e.desired;
  v.scaled_ms = now;
  v.scale_reason = e.why;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t, const ServiceUpdated& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  JobSpec probe = e.replica;
  probe.name = v.spec.name + "-r0";
  probe.tenant = v.spec.tenant;
  if (Status r = probe.CheckRanges(); !r.ok()) return r;
  if (probe.gpu_resource != v.spec.replica.gpu_resource || !(probe.groups == v.current().groups)) {
    return InvalidArgument("service '" + v.spec.name + "' update: changes the replicas' GPU shape; expected the same tasks "
                           "(an update changes the image, command and environment; create a new service for another shape)");
  }
  if (v.templates.size() >= 1000) return Status(Code::kResourceExhausted, "service '" + v.spec.name + "' has 1000 revisions");
  v.templates.push_back(e.replica);
  v.revision = static_cast<int32_t>(v.templates.size());
  v.spec.replica = e.replica;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const ServiceDeleted& e) {
  auto svc = MutableService(e.service);
  if (!svc) return svc.error();
  Service& v = **svc;
  for (const ServiceReplica& r : v.replicas) {
    Job& j = jobs_[r.job.value()];
    if (j.state == JobState::kPending || j.holds_resources()) {
      if (Status s = Apply(now, JobCancelled{r.job}); !s.ok()) return s;
      j.reason = "service '" + v.spec.name + "' deleted";
    }
    service_of_job_[r.job.value()] = ServiceId();
  }
  v.replicas.clear();
  v.deleted = true;
  v.deleted_ms = now;
  return Status::Ok();
}

}  // namespace allot
