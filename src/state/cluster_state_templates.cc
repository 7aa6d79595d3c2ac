// ClusterState::Apply for job templates (state/job_template.h). The fields were read and checked
// by the spec reader before the event (spec/job_template.h); here only what could never be a
// template is refused, so a journal written by an older reader still replays.
#include "state/cluster_state.h"

namespace allot {

const JobTemplate* ClusterState::FindTemplate(TenantId tenant, const std::string& name) const {
  auto it = templates_.find({tenant.value(), name});
  return it == templates_.end() ? nullptr : &it->second;
}

Status ClusterState::CheckTemplate(const JobTemplate& t) const {
  if (!t.tenant.valid() || t.tenant.value() >= tenants_.size() || t.tenant == tenants_.root() ||
      tenants_.tenant(t.tenant).removed) {
    return InvalidArgument("template: tenant " + std::to_string(t.tenant.value()) + " does not exist");
  }
  if (t.name.empty() || t.name.size() > 255) return InvalidArgument("template: name: empty or over 255 bytes");
  if (t.fields.empty() || t.fields.size() > kMaxTemplateFieldsBytes) {
    return InvalidArgument("template '" + t.name + "': fields: empty or over " + std::to_string(kMaxTemplateFieldsBytes) + " bytes");
  }
  if (t.description.size() > kMaxTemplateDescriptionBytes) {
    return InvalidArgument("template '" + t.name + "': description over " + std::to_string(kMaxTemplateDescriptionBytes) + " bytes");
  }
  return Status::Ok();
}

Status ClusterState::Apply(int64_t now, const TemplateSaved& e) {
  const JobTemplate& in = e.template_;
  if (Status s = CheckTemplate(in); !s.ok()) return s;
  auto key = std::make_pair(in.tenant.value(), in.name);
  if (!templates_.count(key)) {
    size_t held = 0;
    for (auto it = templates_.lower_bound({in.tenant.value(), std::string()}); it != templates_.end() && it->first.first == in.tenant.value(); ++it) {
      ++held;
    }
    if (held >= kMaxTemplatesPerTenant) {
      return Status(Code::kResourceExhausted, "tenant '" + tenants_.tenant(in.tenant).path + "' has " + std::to_string(held) +
                                                  " templates, the most it may; delete one first");
    }
  }
  JobTemplate& t = templates_[key];
  t = in;
  t.saved_ms = now;
  return Status::Ok();
}

Status ClusterState::Apply(int64_t, const TemplateRemoved& e) {
  auto it = templates_.find({e.tenant.value(), e.name});
  if (it == templates_.end()) {
    std::string where = e.tenant.valid() && e.tenant.value() < tenants_.size() ? "tenant '" + tenants_.tenant(e.tenant).path + "'"
                                                                               : "tenant " + std::to_string(e.tenant.value());
    return NotFound("template '" + e.name + "' does not exist in " + where);
  }
  templates_.erase(it);
  return Status::Ok();
}

}  // namespace allot
