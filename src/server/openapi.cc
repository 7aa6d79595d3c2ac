// The OpenAPI 3 description of /v1, served at /v1/openapi.json. Kept beside the routes in
// api.cc; tests/server/api_test.cc checks every route is described.
#include "server/openapi.h"

namespace allot {

const char* OpenApiDocument() {
  return R"json({
  "openapi": "3.0.3",
  "info": {"title": "allot", "version": "1", "description": "allotd's control-plane API: jobs, tenants and quotas, nodes, tokens, audit. Every /v1 call but this document needs a bearer token; a caller sees only its scope (a tenant subtree): objects outside it answer 404."},
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "schemas": {
      "Error": {"type": "object", "properties": {"error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string", "description": "names the field, the value and what was expected"}}}}},
      "JobRequest": {"type": "object", "description": "a job as a scenario writes it (docs/scenario.md), JSON or YAML; a duration, or a command (run by a node agent until it exits), or both", "required": ["name", "tenant", "tasks"],
        "properties": {"name": {"type": "string"}, "tenant": {"type": "string"}, "command": {"type": "array", "items": {"type": "string"}, "description": "argv each task runs"}, "kind": {"type": "string", "enum": ["batch", "training", "inference", "interactive"]},
          "duration": {"type": "string", "example": "2h"}, "time_limit": {"type": "string"}, "tasks": {"type": "object", "description": "count, gpus (whole or a fraction below 1), mig, mps {percent, memory}, timeslice, cpu, memory, gpu_model"},
          "topology": {"type": "string", "enum": ["none", "nvlink", "rack", "zone"]}, "priority": {"type": "string"}, "min_runtime": {"type": "string"},
          "checkpoint": {"type": "object"}, "grace": {"type": "string"}}},
      "Job": {"type": "object", "properties": {"name": {"type": "string"}, "tenant": {"type": "string"}, "kind": {"type": "string"}, "command": {"type": "array", "items": {"type": "string"}},
        "state": {"type": "string", "enum": ["pending", "running", "preempting", "finished", "rejected", "cancelled"]}, "class": {"type": "string", "nullable": true},
        "submitted": {"type": "number"}, "started": {"type": "number", "nullable": true}, "finished": {"type": "number", "nullable": true},
        "preemptions": {"type": "integer"}, "nodes": {"type": "array", "items": {"type": "string"}},
        "placement": {"type": "array", "items": {"type": "object", "properties": {"node": {"type": "string"}, "gpu": {"type": "integer"}, "gpus": {"type": "array", "items": {"type": "integer"}}, "mig": {"type": "string"}, "mps": {"type": "object"}, "share": {"type": "integer", "description": "milli-GPU charged"}}}},
        "reason": {"type": "string", "nullable": true}}},
      "TenantRequest": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "guarantee": {"type": "object"}, "max": {"type": "object"}, "weight": {"type": "number"}, "trust": {"type": "string", "enum": ["trusted", "untrusted"]}, "pools": {"type": "array", "items": {"type": "string"}}}},
      "TokenRequest": {"type": "object", "required": ["principal", "role", "scope"], "properties": {"principal": {"type": "string"}, "role": {"type": "string", "enum": ["platform-admin", "org-admin", "team-admin", "member", "auditor", "viewer"]}, "scope": {"type": "string", "description": "tenant path; '' for the whole tree"}}}
    },
    "responses": {
      "Error": {"description": "refused; nothing changed", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    }
  },
  "security": [{"bearer": []}],
  "paths": {
    "/healthz": {"get": {"security": [], "summary": "liveness", "responses": {"200": {"description": "up"}}}},
    "/readyz": {"get": {"security": [], "summary": "readiness: the writer runs and the journal is healthy", "responses": {"200": {"description": "ready"}, "503": {"description": "not ready"}}}},
    "/v1/openapi.json": {"get": {"security": [], "summary": "this document", "responses": {"200": {"description": "OpenAPI 3"}}}},
    "/v1/jobs": {
      "post": {"summary": "submit a job (durable before the answer)", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}}}},
        "responses": {"201": {"description": "accepted", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}}}, "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}, "413": {"$ref": "#/components/responses/Error"}, "429": {"$ref": "#/components/responses/Error"}}},
      "get": {"summary": "list jobs in scope, in submission order", "parameters": [
          {"name": "tenant", "in": "query", "schema": {"type": "string"}}, {"name": "state", "in": "query", "schema": {"type": "string"}},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}, {"name": "after", "in": "query", "schema": {"type": "integer"}, "description": "next_after of the previous page"}],
        "responses": {"200": {"description": "{jobs: [Job], next_after}"}, "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/jobs/{name}": {"get": {"summary": "one job", "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "the job", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}}}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/jobs/{name}/explain": {"get": {"summary": "why it waits, its demand, topology, priority, reservation", "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "the job with demand"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/jobs/{name}/cancel": {"post": {"summary": "cancel", "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "the job, cancelled"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}}}},
    "/v1/tenants": {
      "get": {"summary": "the tenant tree in scope: guarantee, max, usage, trust, weight", "responses": {"200": {"description": "{tenants: [...]}"}}},
      "post": {"summary": "create or update a tenant (the caller manages its parent)", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/TenantRequest"}}}}, "responses": {"200": {"description": "updated"}, "201": {"description": "created"}, "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"description": "top-level guarantees would exceed the fleet's capacity"}}}},
    "/v1/tenants/move": {"post": {"summary": "move a subtree to a new parent or name; usage moves with it, quotas are checked at the new place (the caller manages both parents)", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["path", "to"], "properties": {"path": {"type": "string"}, "to": {"type": "string"}}}}}}, "responses": {"200": {"description": "{path, from}"}, "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}}}},
    "/v1/tenants/{path}": {"delete": {"summary": "delete a tenant with no children and no pending or running jobs; tokens scoped at it are revoked", "parameters": [{"name": "path", "in": "path", "required": true, "schema": {"type": "string"}, "description": "the tenant path, slashes included"}], "responses": {"200": {"description": "{path, deleted}"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"$ref": "#/components/responses/Error"}}}},
    "/v1/usage": {"get": {"summary": "resource-hours per tenant in scope (each over its subtree) within a window; runs still going count up to now", "parameters": [{"name": "from", "in": "query", "schema": {"type": "string"}, "description": "Unix seconds or RFC 3339 UTC (default: 24 hours before to)"}, {"name": "to", "in": "query", "schema": {"type": "string"}, "description": "Unix seconds or RFC 3339 UTC (default: now)"}, {"name": "tenant", "in": "query", "schema": {"type": "string"}}], "responses": {"200": {"description": "{from, to, tenants: [{path, jobs, gpu_hours: {model: h}, cpu_hours, memory_gib_hours}]}"}, "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/invoices": {"get": {"summary": "an org's invoice for a month (the caller's part of it): from the signed ledger once closed, else a draft of the usage so far; needs a rate card (allotd --rates)", "parameters": [{"name": "period", "in": "query", "schema": {"type": "string", "example": "2026-11"}, "description": "YYYY-MM in the org's time zone (default: the current month)"}, {"name": "org", "in": "query", "schema": {"type": "string"}, "description": "a top-level tenant (default: the caller's scope's)"}, {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "csv"]}}], "responses": {"200": {"description": "{org, period, status: closed|open, total: {amount_micros, amount, currency}, by_team, by_project, by_user, by_model, by_class, lines}; or CSV"}, "400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}, "409": {"description": "no rate card configured"}}}},
    "/v1/ledger": {"get": {"summary": "the hash-chained, signed ledger in its text form (platform-admins, auditors over the whole tree); `allot ledger verify --live` checks it", "responses": {"200": {"description": "text/plain: header, then one entry a line"}, "403": {"$ref": "#/components/responses/Error"}, "409": {"description": "no rate card configured"}}}},
    "/v1/budgets": {
      "get": {"summary": "budgets in scope: caps per month, spent and GPU-hours used this month, accounting; warnings given (80%, 100%)", "responses": {"200": {"description": "{budgets: [{tenant, spend, gpu_hours, period, spent, gpu_hours_used, accounting}], warnings: [{time, tenant, period, what, percent, message}]}"}}},
      "post": {"summary": "set a tenant node's caps per month (the caller manages its parent; platform-admins set orgs'); a job whose projected cost would break one is held", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["tenant"], "properties": {"tenant": {"type": "string"}, "spend": {"type": "string", "example": "5000", "description": "in the rate card's currency; \"none\" or absent: no cap"}, "gpu_hours": {"type": "string", "example": "1000"}}}}}}, "responses": {"200": {"description": "{tenant, spend, gpu_hours}"}, "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/nodes": {"get": {"summary": "nodes: condition, pool, GPUs idle, CPU and memory free", "responses": {"200": {"description": "{nodes: [...]}"}}}},
    "/v1/nodes/{name}/{action}": {"post": {"summary": "cordon, drain or uncordon (platform-admin)", "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}, {"name": "action", "in": "path", "required": true, "schema": {"type": "string", "enum": ["cordon", "drain", "uncordon"]}}], "responses": {"200": {"description": "the new condition"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/tokens/{id}/revoke": {"post": {"summary": "revoke a token the caller manages", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"}}], "responses": {"200": {"description": "{id, revoked}"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/tokens": {"get": {"summary": "live tokens whose scope the caller manages: id, principal, role, scope, issued", "responses": {"200": {"description": "{tokens: [...]}"}}}, "post": {"summary": "issue a token (shown once) within the caller's scope and role", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenRequest"}}}}, "responses": {"201": {"description": "{token, principal, role, scope}"}, "400": {"$ref": "#/components/responses/Error"}, "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
    "/v1/events": {"get": {"summary": "the watch stream: events after a sequence number, long-polling up to wait seconds; only what the caller may see", "parameters": [{"name": "since", "in": "query", "schema": {"type": "integer"}}, {"name": "wait", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 30}}], "responses": {"200": {"description": "{events: [{seq, time, type, job?, tenant?, node?}], last}"}}, "description": "a caller far behind (or from before a restart) gets pages of up to 1000 events read back from the journal; go on from last"}},
    "/v1/audit": {"get": {"summary": "the audit log in scope (auditors, org- and team-admins, platform-admin)", "parameters": [{"name": "after", "in": "query", "schema": {"type": "integer"}}], "responses": {"200": {"description": "{records: [{seq, time, actor, role, tenant, action, target, outcome, request_id, hash}]}"}, "403": {"$ref": "#/components/responses/Error"}}}}
  }
})json";
}

}  // namespace allot
