// Tenants' job templates over the REST API (docs/templates.md): create or replace
// (POST /v1/templates[?replace=true]), list (GET /v1/templates[?tenant=PATH]), show
// (GET /v1/templates/NAME[?tenant=PATH]) and delete (DELETE /v1/templates/NAME[?tenant=PATH]).
//
// Roles: a manager of the tenant (org-admin, team-admin, platform-admin) creates and deletes its
// templates; anyone who may see the tenant, or any tenant below it (a template is visible to its
// subtree), reads them. A template the caller cannot see does not exist for it (404). The body
// is read by the spec reader (spec/job_template.h), the same one as a scenario's `templates:`.
#include <httplib.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/calendar.h"
#include "core/names.h"
#include "server/api_routes.h"
#include "server/body_reader.h"
#include "server/job_lookup.h"
#include "spec/field_reader.h"
#include "spec/job_template.h"

namespace allot {
namespace {

// The fields' tree as JSON: integers and true/false as such (when that is how they read back),
// other scalars as strings.
Json FieldsJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : n) out[kv.first.Scalar()] = FieldsJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const YAML::Node& x : n) out.push_back(FieldsJson(x));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (auto v = ParseInteger(s, INT64_MIN + 1, INT64_MAX); v && std::to_string(*v) == s) return *v;
      if (s == "true" || s == "false") return s == "true";
      return s;
    }
    default:
      return nullptr;
  }
}

Json TemplateJson(const ClusterState& st, const JobTemplate& t) {
  Json fields;
  try {
    fields = FieldsJson(YAML::Load(t.fields));
  } catch (const YAML::Exception&) {
    fields = t.fields;  // not reached: the reader wrote it
  }
  return {{"name", t.name},
          {"tenant", st.tenants().tenant(t.tenant).path},
          {"description", t.description},
          {"job", fields},
          {"saved_by", t.saved_by},
          {"saved", FormatRfc3339(t.saved_ms)}};
}

// Whether `who` may read the templates of `t`: it sees t, or t lies above its scope.
bool MaySee(const ClusterState& st, const Principal& who, TenantId t) {
  return Allowed(st.tenants(), who, Action::kRead, t) || InSubtree(st.tenants(), who.scope, t);
}

// The templates named `name` the caller may see: at the tenant given (?tenant=PATH) the one a job
// of that tenant would take (its own, else the nearest ancestor's); without, every one of that
// name (the caller then names the tenant when there are several).
Result<const JobTemplate*> Resolve(const ClusterState& st, const Principal& who, const std::optional<std::string>& tenant,
                                   const std::string& name) {
  const Status missing = NotFound("template '" + EscapeText(name) + "' does not exist" +
                                  (tenant ? " for tenant '" + EscapeText(*tenant) + "'" : ""));
  if (tenant) {
    TenantId t = st.tenants().Find(*tenant);
    if (!t.valid() || t == st.tenants().root() || !MaySee(st, who, t)) return Err(missing);
    for (; t.valid() && t != st.tenants().root(); t = st.tenants().tenant(t).parent) {
      if (const JobTemplate* found = st.FindTemplate(t, name); found && MaySee(st, who, t)) return found;
    }
    return Err(missing);
  }
  std::vector<const JobTemplate*> seen;
  for (const auto& [key, x] : st.templates()) {
    if (x.name == name && MaySee(st, who, x.tenant)) seen.push_back(&x);
  }
  if (seen.empty()) return Err(missing);
  if (seen.size() > 1) {
    std::string where;
    for (const JobTemplate* x : seen) where += (where.empty() ? "" : ", ") + st.tenants().tenant(x->tenant).path;
    return Err(InvalidArgument("tenant: required: templates named '" + name + "' are defined at " + where +
                               "; expected ?tenant=PATH"));
  }
  return seen.front();
}

// POST {"name", "tenant", "description"?, "job": {FIELDS}}; ?replace=true replaces one of that name.
void Create(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const bool replace = req.has_param("replace") && req.get_param_value("replace") == "true";
  AuditContext audit = AuditOf(who, "", replace ? "template.replace" : "template.create", "", ctx.request_id(req, res));
  if (req.body.empty()) return ctx.refuse(res, audit, InvalidArgument("body: expected a template as JSON: {name, tenant, job: {...}}"));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  const YamlReader rd("body");
  if (!tree->IsMap()) return ctx.refuse(res, audit, rd.Error(*tree, "(body)", "expected an object with name, tenant and job"));
  Result<TemplateDef> def = Err(InvalidArgument(""));
  try {
    def = ReadTemplate(rd, *tree, "");
  } catch (const YAML::Exception& e) {
    def = Err(InvalidArgument("body: " + e.msg));
  }
  if (!def) return ctx.refuse(res, audit, def.error());
  audit.tenant = def->tenant;
  audit.target = def->name;
  JobTemplate t{TenantId(), def->name, def->description, def->fields, who.name, 0};
  Status may = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    TenantId id = st.tenants().Find(def->tenant);
    if (!id.valid() || id == st.tenants().root() || !Allowed(st.tenants(), who, Action::kRead, id)) {
      return InvalidArgument("body: tenant: unknown tenant '" + EscapeText(def->tenant) + "'; expected a path listed under tenants");
    }
    if (!Allowed(st.tenants(), who, Action::kManage, id)) return MayNot(who, "manage templates (org-admin or team-admin of the tenant)");
    if (!replace && st.FindTemplate(id, def->name)) {
      return Conflict("template '" + def->name + "' already exists in tenant '" + def->tenant + "'; expected a new name, or ?replace=true");
    }
    t.tenant = id;
    return Status::Ok();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(TemplateSaved{t}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    const JobTemplate* saved = st.FindTemplate(t.tenant, t.name);
    if (saved) Reply(res, 201, TemplateJson(st, *saved));
    else ReplyError(res, NotFound("template '" + t.name + "' was deleted as it was saved"));
    return 0;
  });
}

void List(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const auto tenant = TenantParam(req);
  ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    if (tenant) {
      // What a job of that tenant may name: its own templates, then its ancestors' not shadowed.
      TenantId t = st.tenants().Find(*tenant);
      if (!t.valid() || t == st.tenants().root() || !MaySee(st, who, t)) {
        ReplyError(res, NotFound("tenant '" + EscapeText(*tenant) + "' does not exist"));
        return 0;
      }
      std::vector<std::string> names;
      for (TenantId a = t; a.valid() && a != st.tenants().root(); a = st.tenants().tenant(a).parent) {
        for (auto it = st.templates().lower_bound({a.value(), std::string()}); it != st.templates().end() && it->first.first == a.value(); ++it) {
          if (std::find(names.begin(), names.end(), it->second.name) != names.end()) continue;
          names.push_back(it->second.name);
          out.push_back(TemplateJson(st, it->second));
        }
      }
    } else {
      for (const auto& [key, x] : st.templates()) {
        if (MaySee(st, who, x.tenant)) out.push_back(TemplateJson(st, x));
      }
    }
    Reply(res, 200, {{"templates", out}});
    return 0;
  });
}

void Show(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const std::string name = req.matches[1];
  const auto tenant = TenantParam(req);
  ctx.ctl.Read([&](const ClusterState& st) {
    auto t = Resolve(st, who, tenant, name);
    if (!t) {
      ReplyError(res, t.error());
    } else {
      Reply(res, 200, TemplateJson(st, **t));
    }
    return 0;
  });
}

void Delete(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const std::string name = req.matches[1];
  const auto tenant = TenantParam(req);
  AuditContext audit = AuditOf(who, tenant.value_or(""), "template.delete", name, ctx.request_id(req, res));
  TemplateRemoved removed{TenantId(), name};
  Status may = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    auto t = Resolve(st, who, tenant, name);
    if (!t) return t.error();
    // At the tenant named, only its own: deleting an ancestor's is done at the ancestor.
    if (tenant && st.tenants().tenant((*t)->tenant).path != *tenant) {
      return NotFound("template '" + EscapeText(name) + "' is not defined at tenant '" + EscapeText(*tenant) + "' (it is " +
                      st.tenants().tenant((*t)->tenant).path + "'s); expected ?tenant=" + st.tenants().tenant((*t)->tenant).path);
    }
    removed.tenant = (*t)->tenant;
    audit.tenant = st.tenants().tenant(removed.tenant).path;
    if (!Allowed(st.tenants(), who, Action::kManage, removed.tenant)) return MayNot(who, "manage templates (org-admin or team-admin of the tenant)");
    return Status::Ok();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  Json gone;
  ctx.ctl.Read([&](const ClusterState& st) {
    if (const JobTemplate* x = st.FindTemplate(removed.tenant, name)) gone = TemplateJson(st, *x);
    return 0;
  });
  auto r = ctx.ctl.Execute(removed, audit);
  if (!r) return ReplyError(res, r.error());
  Reply(res, 200, gone);
}

}  // namespace

Result<TemplateCatalog> TemplatesNamedBy(RouteContext& ctx, const YAML::Node& tree) {
  std::set<std::string> named;
  auto note = [&](const YAML::Node& n) {
    if (n.IsMap() && n["tenant"] && n["tenant"].IsScalar()) named.insert(n["tenant"].Scalar());
  };
  if (tree.IsSequence()) {
    for (const YAML::Node& n : tree) note(n);
  } else {
    note(tree);
  }
  return ctx.ctl.Read([&](const ClusterState& st) -> Result<TemplateCatalog> {
    TemplateCatalog catalog;
    for (const auto& [key, t] : st.templates()) {
      const std::string& at = st.tenants().tenant(t.tenant).path;
      bool visible = std::any_of(named.begin(), named.end(), [&](const std::string& p) {
        return p == at || (p.size() > at.size() && p.compare(0, at.size(), at) == 0 && p[at.size()] == '/');
      });
      if (visible) TRY_STATUS(catalog.Add(at, t.name, t.fields));
    }
    return catalog;
  });
}

void TemplateRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/templates", ctx.Handle(Create));
  http.Get("/v1/templates", ctx.Handle(List));
  http.Get(R"(/v1/templates/([^/]+))", ctx.Handle(Show));
  http.Delete(R"(/v1/templates/([^/]+))", ctx.Handle(Delete));
}

}  // namespace allot
