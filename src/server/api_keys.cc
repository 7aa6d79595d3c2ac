// A tenant's SSH public keys over the REST API (issue 16, dedicated clusters): register
// (POST /v1/keys), list (GET /v1/keys[?tenant=PATH]), remove (DELETE /v1/keys/ID). Roles as for
// reservations: a member registers and removes keys of its tenant, a reader lists them; a key of
// a tenant the caller cannot see does not exist for it (404). Each key is checked by the same
// function the agent uses before it authorises the key (wire/ssh_public_key.h) and shown with its
// SHA-256 fingerprint as ssh-keygen -l prints it.
#include <httplib.h>
#include <sodium.h>

#include <string>

#include "core/calendar.h"
#include "core/names.h"
#include "server/api_routes.h"
#include "server/body_reader.h"
#include "server/job_lookup.h"
#include "spec/field_reader.h"
#include "wire/ssh_public_key.h"

namespace allot {
namespace {

// "SHA256:" and the unpadded base64 of the SHA-256 of the key's decoded body (ssh-keygen -l -E sha256).
std::string Fingerprint(const SshPublicKey& key) {
  std::string blob(key.body.size(), '\0');
  size_t len = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(blob.data()), blob.size(), key.body.data(), key.body.size(),
                        nullptr, &len, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
    return "";  // ParseSshPublicKey took it as canonical base64: not reached
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(blob.data()), len);
  char b64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES, sodium_base64_VARIANT_ORIGINAL_NO_PADDING)];
  sodium_bin2base64(b64, sizeof b64, digest, sizeof digest, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
  return std::string("SHA256:") + b64;
}

Json KeyJson(const ClusterState& st, const SshKeyRecord& k) {
  auto key = ParseSshPublicKey(k.line);
  Json out = {{"id", k.id.value()},
              {"tenant", st.tenants().tenant(k.tenant).path},
              {"type", key ? key->type : ""},
              {"comment", key ? key->comment : ""},
              {"fingerprint", k.fingerprint},
              {"added_by", k.added_by},
              {"added", FormatRfc3339(k.added_ms)}};
  if (k.removed) out["removed"] = FormatRfc3339(k.removed_ms);
  return out;
}

// POST {"tenant": PATH, "key": "ssh-ed25519 AAAA… comment"}.
void Add(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  AuditContext audit = AuditOf(who, "", "key.add", "", ctx.request_id(req, res));
  auto tree = ReadBody(req.get_header_value("Content-Type"), req.body, "");
  if (!tree) return ctx.refuse(res, audit, tree.error());
  const YamlReader rd("body");
  const YAML::Node& body = *tree;
  if (Status s = rd.Fields(body, "", {"tenant", "key"}); !s.ok()) return ctx.refuse(res, audit, s);
  for (const char* f : {"tenant", "key"}) {
    if (!body[f]) return ctx.refuse(res, audit, rd.Error(body, f, "missing; expected it"));
  }
  auto tenant = rd.Scalar(body["tenant"], "tenant");
  if (!tenant) return ctx.refuse(res, audit, tenant.error());
  audit.tenant = *tenant;
  auto line = rd.Scalar(body["key"], "key");
  if (!line) return ctx.refuse(res, audit, line.error());
  std::string text = *line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();  // a file's last newline
  auto key = ParseSshPublicKey(text);
  if (!key) return ctx.refuse(res, audit, InvalidArgument("body: key: " + key.error().message()));
  SshKeyRecord record;
  record.line = key->Line();
  record.fingerprint = Fingerprint(*key);
  record.added_by = who.name;
  audit.target = record.fingerprint;
  Status may = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    TenantId t = st.tenants().Find(*tenant);
    if (!t.valid() || t == st.tenants().root() || !Allowed(st.tenants(), who, Action::kRead, t)) {
      return InvalidArgument("body: tenant: unknown tenant '" + EscapeText(*tenant) + "'");
    }
    if (!Allowed(st.tenants(), who, Action::kSubmit, t)) return MayNot(who, "register ssh keys");
    record.tenant = t;
    return Status::Ok();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(SshKeyAdded{record}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    Reply(res, 201, KeyJson(st, st.ssh_keys().back()));
    return 0;
  });
}

void List(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const auto tenant = TenantParam(req);
  const bool all = req.has_param("all") && req.get_param_value("all") == "true";
  ctx.ctl.Read([&](const ClusterState& st) {
    Json out = Json::array();
    TenantId only = tenant ? st.tenants().Find(*tenant) : TenantId();
    for (const SshKeyRecord& k : st.ssh_keys()) {
      if ((k.removed && !all) || (tenant && k.tenant != only)) continue;
      if (Allowed(st.tenants(), who, Action::kRead, k.tenant)) out.push_back(KeyJson(st, k));
    }
    Reply(res, 200, {{"keys", out}});
    return 0;
  });
}

void Remove(RouteContext& ctx, const httplib::Request& req, httplib::Response& res, const Principal& who) {
  const std::string id_text = req.matches[1];
  AuditContext audit = AuditOf(who, "", "key.remove", id_text, ctx.request_id(req, res));
  const Status missing = NotFound("ssh key '" + EscapeText(id_text) + "' does not exist");
  uint32_t id = 0;
  if (id_text.empty() || id_text.size() > 9 || id_text.find_first_not_of("0123456789") != std::string::npos) {
    return ctx.refuse(res, audit, missing);
  }
  id = static_cast<uint32_t>(std::stoul(id_text));
  Status may = ctx.ctl.Read([&](const ClusterState& st) -> Status {
    if (id >= st.ssh_keys().size() || st.ssh_keys()[id].removed) return missing;
    const SshKeyRecord& k = st.ssh_keys()[id];
    if (!Allowed(st.tenants(), who, Action::kRead, k.tenant)) return missing;
    audit.tenant = st.tenants().tenant(k.tenant).path;
    audit.target = k.fingerprint;
    if (!Allowed(st.tenants(), who, Action::kSubmit, k.tenant)) return MayNot(who, "remove ssh keys");
    return Status::Ok();
  });
  if (!may.ok()) return ctx.refuse(res, audit, may);
  auto r = ctx.ctl.Execute(SshKeyRemoved{SshKeyId(id)}, audit);
  if (!r) return ReplyError(res, r.error());
  ctx.ctl.Read([&](const ClusterState& st) {
    Reply(res, 200, KeyJson(st, st.ssh_keys()[id]));
    return 0;
  });
}

}  // namespace

void KeyRoutes(HttpRouter& http, RouteContext& ctx) {
  http.Post("/v1/keys", ctx.Handle(Add));
  http.Get("/v1/keys", ctx.Handle(List));
  http.Delete(R"(/v1/keys/([^/]+))", ctx.Handle(Remove));
}

}  // namespace allot
