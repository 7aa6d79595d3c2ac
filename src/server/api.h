// The REST API, /v1, JSON over HTTP (server/http_server.h), in front of the Controller.
//
//   GET  /healthz, /readyz
//   POST /v1/jobs                       a job as a scenario writes it (JSON), answered 201 + job
//   GET  /v1/jobs[?tenant=&state=&limit=&after=]   list, by submission order, paginated
//   GET  /v1/jobs/{name}                the simulator report's per-job fields
//   GET  /v1/jobs/{name}/explain        why it waits (or was rejected), with its demand
//   POST /v1/jobs/{name}/cancel
//   GET  /v1/tenants                    the tree with guarantee, max and usage per resource
//   POST /v1/tenants                    create or update one (scenario tenant format); the caller
//                                       manages its parent (org-admins shape their teams, not their org)
//   GET  /v1/nodes                      nodes with condition, pool and free capacity
//   POST /v1/nodes/{name}/{cordon|drain|uncordon}   platform-admin only
//   POST /v1/tokens                     {"principal", "role", "scope"} → {"token"} (shown once)
//   GET  /v1/tokens, POST /v1/tokens/{id}/revoke   the live tokens the caller manages
//   GET  /v1/whoami                     the token's principal, role and scope
//   GET  /v1/audit[?after=]             the hash-chained audit log, in scope
//   GET  /v1/events?since=N[&wait=S]    the watch stream (long poll), in scope
//   GET  /v1/invoices, /v1/ledger, /v1/budgets; POST /v1/budgets, /v1/ledger/adjustments
//                                        billing (server/api_billing.h)
//   GET  /v1/history[?since=T]          the fleet's and tenants' GPUs and queues sampled over time
//                                       (daemon/history.h), only the tenants the caller may read
//   GET  /, /ui/{file}                  the web dashboard (web/, no token; it calls /v1 with one)
//   GET  /v1/openapi.json               the OpenAPI 3 description (no token needed)
//   GET  /metrics                       Prometheus text format (server/metrics_page.h), for a
//                                       platform-admin or an auditor; also without a token on
//                                       ApiOptions::metrics_port, a listener of its own
//   GET  /v1/nodes/{name}, POST /v1/nodes/{name}/check, GET /v1/jobs/{name}/logs, and the two
//        /v1/nodes routes above   (api_nodes.cc)
//   /v1/agent/…                         the node agents' protocol (api_agent.cc)
//
// Every /v1 request carries "Authorization: Bearer <token>" (401 without). A caller sees only
// its scope's subtree: another tenant's job, tenant or scope answers 404, never 403; 403 is for
// an action its role lacks on something it may see (a viewer submitting, a member cordoning).
//
// Errors: {"error": {"code": "invalid_argument", "message": "job.tasks.gpus: …"}} with the
// matching HTTP status (400, 401, 403, 404, 409, 413, 429, 503). A refused request changes
// nothing (but the audit log).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "daemon/agent_registry.h"
#include "daemon/alert_monitor.h"
#include "daemon/controller.h"
#include "daemon/history.h"
#include "metrics/histogram.h"
#include "server/http_server.h"

namespace allot {

class InterferenceMonitor;  // daemon/interference_monitor.h
class AutoscaleMonitor;     // daemon/autoscale_monitor.h

struct ApiOptions {
  std::string host = "127.0.0.1";
  int port = 7070;                      // 0: any free port (see ApiServer::port)
  size_t max_body_bytes = 1 << 20;      // larger bodies get 413
  // Requests handled at once (handler threads). Connections hold no thread (server/http_server.h):
  // at most max_connections open; a request head must arrive within header_timeout, and an idle
  // keep-alive connection is closed after idle_timeout; each token holds at most
  // max_long_polls_per_token waiting requests (/v1/events; /v1/agent/assignments per node under
  // the token), 429 beyond.
  size_t threads = 64;
  size_t max_connections = 20000;
  size_t max_long_polls_per_token = 256;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{120000};
  // Per-token rate limit: a bucket of `rate_burst` requests refilled at `rate_per_second`;
  // beyond it, 429 with Retry-After. 0 turns it off.
  double rate_per_second = 10000;
  double rate_burst = 20000;
  // HTTPS (OpenSSL) when both are set: PEM certificate chain and private key.
  std::string tls_cert;
  std::string tls_key;
  // Where refused authentications are reported (allotd: its log). They have no actor, so they
  // are not in the hash-chained audit log, which an anonymous caller must not be able to grow;
  // at most 10 lines a second are written, with a count of those left out.
  std::function<void(const std::string&)> log;
  // Node agents: their sessions (shared with allotd's supervisor, which declares silent nodes
  // lost; one of its own when unset), where their task logs go (empty: none kept), how long a
  // silent node lasts, and how often agents heartbeat.
  std::shared_ptr<AgentRegistry> agents;
  std::string log_dir;
  int64_t node_timeout_ms = 15000;
  int64_t heartbeat_ms = 1000;
  // Dedicated clusters' ports on booked nodes start here (server/cluster_wire.h).
  int cluster_port_base = 30000;
  // allotd's cluster-key (DATA/cluster-key): each window's munge key is derived from it. Empty:
  // no multi-node Slurm is assigned (each booked node's agent runs a Slurm of its own node).
  std::string cluster_secret;
  // Booked nodes are asked to run their acceptance checks this long before a window opens
  // (allotd --acceptance-lead; daemon/acceptance_supervisor.h settles what they answer).
  int64_t acceptance_lead_ms = 10 * 60 * 1000;
  // The fleet and tenants sampled over time (allotd's sampler adds to it; GET /v1/history reads
  // it); an empty one of its own when unset.
  std::shared_ptr<History> history;
  // The noisy-neighbour detector heartbeats feed (allotd makes one; null: no detection).
  std::shared_ptr<InterferenceMonitor> interference;
  // The services' autoscaler, fed the replicas' loads by heartbeats; null: loads are ignored.
  std::shared_ptr<AutoscaleMonitor> autoscale;
  // allotd's own measurements (shared with its Controller); one of its own when unset.
  std::shared_ptr<DaemonMetrics> metrics;
  // A second listener serving only GET /metrics, without a token (allotd --metrics-listen):
  // port -1 for none, 0 for any free port (see ApiServer::metrics_port). Plain HTTP.
  std::string metrics_host = "127.0.0.1";
  int metrics_port = -1;
  // Anomaly alerts (allotd: always): told of every presented token refused, listed at
  // GET /v1/alerts and counted on /metrics. Unset: none.
  std::shared_ptr<AlertMonitor> alerts;
};

class ApiServer {
 public:
  ApiServer(Controller& controller, ApiOptions options);
  ~ApiServer();

  // Binds and serves on a background thread. Fails naming the address.
  Status Start();
  void Stop();
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  HttpStats http_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  int metrics_port_ = -1;
};

}  // namespace allot
