// allotd: the control-plane daemon. The journal (SQLite under --data, or PostgreSQL with
// --store URL) is the state; the controller is its one writer; the REST API serves /v1 on
// --listen.
//
//   allotd [--config allot.yaml] [--listen 127.0.0.1:7070] [--data ./allot-data]
//          [--store sqlite] [--tenants FILE] [--simulated-fleet FILE] [--pass-interval 60s]
//          [--tls-cert PEM --tls-key PEM] [--rate-limit N] [--snapshot-every N] [--rates FILE]
//          [--init-fresh] [--history-interval 60s]
//
// The web dashboard (web/, compiled in) is served at http://LISTEN/; it reads /v1 with the token
// given to its login page. Its charts read GET /v1/history, sampled every --history-interval.
//
// With a rate card (--rates), usage is closed monthly into a hash-chained ledger signed with
// the ed25519 key in DIR/ledger-key (made on first use, 0600), and budgets hold jobs.
// DIR/cluster-key (made on first use, 0600) is the secret dedicated Slurm clusters' munge keys
// are derived from (server/cluster_wire.h).
//
// On first start (an empty journal) the tenants of --tenants and the fleet of
// --simulated-fleet (scenario files; only those sections are read) are applied as the first
// events; later starts restore everything from the journal and ignore them. An empty journal in
// a data directory used before (allotd/data_dir.h) is refused unless --init-fresh is given.
//
// Everything allotd writes is owner-only (umask 077); --data is made 0700 at start.
#include <charconv>
#include <CLI/CLI.hpp>

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "allotd/config.h"
#include "allotd/data_dir.h"
#include "billing/zoneinfo.h"
#include "core/quantity.h"
#include "core/version.h"
#include "daemon/controller.h"
#include "daemon/history.h"
#include "daemon/periodic.h"
#include "daemon/acceptance_supervisor.h"
#include "daemon/autoscale_monitor.h"
#include "daemon/interference_monitor.h"
#include "daemon/alert_monitor.h"
#include "daemon/node_supervisor.h"
#include "daemon/open_metering.h"
#include "metering/budget_gate.h"
#include "server/api.h"
#include "server/auth.h"
#include "spec/scenario.h"
#include "spec/setup.h"
#include "store/open_journal.h"

namespace {

using namespace allot;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first events of a new journal: the fleet, then the tenants (from a scenario file or the
// config file), validated as a scenario is.
Result<std::vector<Event>> BootstrapEvents(const DaemonConfig& c) {
  Scenario sc;
  sc.file = !c.tenants_file.empty() ? c.tenants_file : !c.tenants.empty() ? c.file : c.fleet_file;
  if (!c.fleet_file.empty()) {
    auto f = LoadScenario(c.fleet_file);
    if (!f) return Err(f.error());
    sc.nodes = std::move(f->nodes);
  }
  if (!c.tenants_file.empty()) {
    auto t = LoadScenario(c.tenants_file);
    if (!t) return Err(t.error());
    sc.tenants = std::move(t->tenants);
  } else {
    sc.tenants = c.tenants;
  }
  std::vector<Event> events;
  ClusterState scratch;
  Status s = BuildInitialState(sc, scratch, [&](const Event& e) { events.push_back(e); });
  if (!s.ok()) return Err(s);
  return events;
}

// The settings: defaults, then the config file, then each flag given. Errors name the flag.
Result<DaemonConfig> ApplyFlags(const CLI::App& app, const DaemonConfig& flags, const std::string& config_file,
                                const std::string& pass_interval, const std::string& node_timeout,
                                const std::string& history_interval) {
  DaemonConfig config;
  if (!config_file.empty()) {
    auto loaded = LoadDaemonConfig(config_file);
    if (!loaded) return Err(loaded.error());
    config = std::move(*loaded);
  }
  auto given = [&](const char* flag) { return app.count(flag) > 0; };
  if (given("--listen")) config.listen = flags.listen;
  if (given("--metrics-listen")) config.metrics_listen = flags.metrics_listen;
  if (given("--data")) config.data = flags.data;
  if (given("--store")) config.store = flags.store;
  if (given("--tenants")) {
    config.tenants_file = flags.tenants_file;
    config.tenants.clear();
  }
  if (given("--simulated-fleet")) config.fleet_file = flags.fleet_file;
  if (given("--tls-cert")) config.tls_cert = flags.tls_cert;
  if (given("--tls-key")) config.tls_key = flags.tls_key;
  if (given("--rate-limit")) config.rate_limit = flags.rate_limit;
  if (given("--snapshot-every")) config.snapshot_every = flags.snapshot_every;
  if (given("--rates")) config.rates_file = flags.rates_file;
  if (given("--alert-webhook")) config.alert_webhook = flags.alert_webhook;
  if (given("--alert-webhook-ca")) config.alert_webhook_ca = flags.alert_webhook_ca;
  if (given("--pass-interval")) {
    auto interval = ParseDurationMs(pass_interval);
    if (!interval || *interval <= 0) {
      return Err(InvalidArgument("--pass-interval: '" + pass_interval + "' is not valid; expected a duration such as 60s"));
    }
    config.scheduler.pass_interval_ms = *interval;
  }
  if (given("--node-timeout")) {
    auto timeout = ParseDurationMs(node_timeout);
    if (!timeout || *timeout < 1000) {
      return Err(InvalidArgument("--node-timeout: '" + node_timeout + "' is not valid; expected a duration of at least 1s"));
    }
    config.node_timeout_ms = *timeout;
  }
  if (given("--history-interval")) {
    auto interval = ParseDurationMs(history_interval);
    if (!interval || *interval < 1000 || *interval > 3600 * 1000) {
      return Err(InvalidArgument("--history-interval: '" + history_interval +
                                 "' is not valid; expected a duration from 1s to 1h, such as 60s"));
    }
    config.history_interval_ms = *interval;
  }
  if (config.rate_limit < 0) return Err(InvalidArgument("--rate-limit: must not be negative"));
  if (config.snapshot_every < 0) return Err(InvalidArgument("--snapshot-every: must not be negative"));
  return config;
}

// "host:port" as (host, port); "host:80x" and "host:99999999999" are refused, not read as 80
// or wrapped.
Result<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const char* first = listen.data() + colon + 1;
    const char* last = listen.data() + listen.size();
    auto [end, ec] = std::from_chars(first, last, port);
    if (ec != std::errc() || end != last) port = -1;
  }
  if (colon == std::string::npos || port < 0 || port > 65535) {
    return Err(InvalidArgument("listen: '" + listen + "' is not valid; expected host:port such as 127.0.0.1:7070"));
  }
  return std::make_pair(listen.substr(0, colon), port);
}

// A new journal's first events: the tenants and simulated fleet of the config, then the first
// platform-admin token, written to DATA/admin-token (0600 from the start). Returns that file.
Result<std::string> Bootstrap(Controller& controller, const DaemonConfig& config) {
  auto events = BootstrapEvents(config);
  if (!events) return Err(events.error());
  for (Event& e : *events) {
    auto r = controller.Execute(std::move(e.body));
    if (!r) return Err(Unavailable("bootstrap: " + r.error().message()));
  }
  // The first platform-admin token: shown once, in a file only its owner can read.
  std::string token = NewToken();
  std::string token_file = (std::filesystem::path(config.data) / "admin-token").string();
  {
    // Created 0600 from the start (no window where another user could read it).
    int fd = ::open(token_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    std::string line = token + "\n";
    bool ok = fd >= 0 && ::fchmod(fd, 0600) == 0 &&
              ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) return Err(Unavailable("cannot write " + token_file + ": " + std::strerror(errno)));
  }
  auto issued = controller.Execute(
      TokenIssued{TokenRecord{HashToken(token), Principal{"admin", Role::kPlatformAdmin, TenantId(0)}, 0, false}});
  if (!issued) return Err(Unavailable("issuing the admin token: " + issued.error().message()));
  return token_file;
}

// Every connection is a descriptor: takes the hard limit and returns how many connections fit,
// keeping room for the journal and logs.
size_t RaiseFileLimit() {
  size_t room = SIZE_MAX;
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      room = files.rlim_cur > 256 ? files.rlim_cur - 256 : files.rlim_cur / 2;
    }
  }
  return room;
}

// The command line: each flag given overrides the config file (ApplyFlags).
struct CommandLine {
  DaemonConfig flags;
  std::string config_file, pass_interval, node_timeout, history_interval;
  bool init_fresh = false;
  int cluster_port_base = 30000;
  std::string acceptance_lead = "10m";
  std::string interference_quiet = "60s";
  int interference_onset = 3;
};

void AddFlags(CLI::App& app, CommandLine& cl) {
  DaemonConfig& flags = cl.flags;
  app.set_version_flag("--version", std::string("allotd ") + kAllotVersion);
  app.add_option("--config", cl.config_file, "YAML settings (see src/allotd/config.h); flags override it");
  app.add_option("--listen", flags.listen, "address:port to serve the API on")->capture_default_str();
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "address:port to serve GET /metrics on without a token (Prometheus); off unless given");
  app.add_option("--data", flags.data, "directory for the admin token and the SQLite journal")->capture_default_str();
  app.add_option("--store", flags.store, "the journal: sqlite (under --data) or a PostgreSQL URL")->capture_default_str();
  app.add_option("--tenants", flags.tenants_file, "scenario-format file whose tenants: seed a new journal");
  app.add_option("--simulated-fleet", flags.fleet_file, "scenario-format file whose fleet: runs in-process, simulated");
  app.add_option("--pass-interval", cl.pass_interval, "scheduling tick while jobs wait (default 60s)");
  app.add_option("--tls-cert", flags.tls_cert, "PEM certificate: serve HTTPS (with --tls-key)");
  app.add_option("--tls-key", flags.tls_key, "PEM private key for --tls-cert");
  app.add_option("--rate-limit", flags.rate_limit, "requests per second per token (burst: twice that; 0: off)")->capture_default_str();
  app.add_option("--rates", flags.rates_file, "rate card (YAML): meter usage into the signed ledger, enforce budgets");
  app.add_option("--alert-webhook", flags.alert_webhook,
                 "http[s]://HOST[:PORT]/PATH: anomaly alerts (docs/alerts.md) are POSTed there as JSON, retried with back-off");
  app.add_option("--alert-webhook-ca", flags.alert_webhook_ca, "PEM file of the CAs an https --alert-webhook is checked against "
                                                               "(default: the system's)");
  app.add_option("--snapshot-every", flags.snapshot_every, "journal events between state snapshots (0: never)")->capture_default_str();
  app.add_flag("--init-fresh", cl.init_fresh,
               "start an empty journal although --data was used before (admin-token, ledger-key or logs found); "
               "without it allotd refuses, since a missing or empty journal there means lost state");
  app.add_option("--history-interval", cl.history_interval,
                 "how often the dashboard's charts sample the fleet and tenants (GET /v1/history; default 60s)");
  app.add_option("--node-timeout", cl.node_timeout, "an agent silent this long: its node is lost, its jobs requeued (default 15s)");
  app.add_option("--cluster-port-base", cl.cluster_port_base,
                 "dedicated clusters' ports (sshd, slurmctld, slurmd) on booked nodes are taken from BASE to BASE+24575")
      ->check(CLI::Range(1024, 65535 - 3 * 8192))
      ->capture_default_str();
  app.add_option("--acceptance-lead", cl.acceptance_lead,
                 "booked nodes run their acceptance checks from this long before a reservation's window opens; "
                 "a node that fails is replaced from free capacity (at least 1m)")
      ->capture_default_str();
  app.add_option("--interference-quiet", cl.interference_quiet,
                 "a noisy-neighbour response is lifted once its victim's latency has been normal this long "
                 "(docs/noisy-neighbour.md; at least 1s)")
      ->capture_default_str();
  app.add_option("--interference-onset", cl.interference_onset,
                 "consecutive regressed heartbeats (with a risen neighbour) before allotd responds")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
}

// The journal, opened only if the data directory's state allows it (a used directory with no
// journal is refused unless --init-fresh); `fresh` when it holds no event yet.
struct OpenedJournal {
  std::unique_ptr<Journal> journal;
  std::string shown;  // the store as logs name it: no password
  bool fresh = false;
};

Result<OpenedJournal> OpenDataJournal(const DaemonConfig& config, bool init_fresh) {
  const std::string& data = config.data;
  auto tightened = MakeDataDirPrivate(data);
  if (!tightened) return Err(tightened.error());
  for (const std::string& line : *tightened) std::cerr << "allotd: made private: " << line << "\n";
  OpenedJournal out;
  out.shown = DescribeStore(config.store, data);
  FreshStart start{data, out.shown};
  start.signs = SignsOfUse(data);
  start.init_fresh = init_fresh;
  std::error_code ec;
  start.journal_missing =
      out.shown == (std::filesystem::path(data) / "journal.db").string() && !std::filesystem::exists(out.shown, ec);
  if (start.journal_missing) {
    // Refused before SQLite creates the file, so the directory is left as it was found.
    if (Status s = CheckFreshStart(start); !s.ok()) return Err(s);
  }
  auto journal = OpenJournal(config.store, data);
  if (!journal) return Err(InvalidArgument("store: " + journal.error().message()));
  if (!(*journal)->opened_note().empty()) std::cerr << "allotd: " << (*journal)->opened_note() << "\n";
  start.events = (*journal)->last_seq();
  if (Status s = CheckFreshStart(start); !s.ok()) return Err(s);
  out.fresh = (*journal)->last_seq() == 0;
  if (out.fresh && !start.signs.empty()) {
    std::cerr << "allotd: --init-fresh: starting an empty journal in a used data directory; admin-token is replaced\n";
  }
  out.journal = std::move(*journal);
  return out;
}

Result<ControllerOptions> ControllerOptionsOf(const DaemonConfig& config) {
  ControllerOptions options;
  options.scheduler = config.scheduler;
  options.simulate_runs = !config.fleet_file.empty();
  options.min_pass_gap_ms = 100;
  options.snapshot_every = static_cast<uint64_t>(config.snapshot_every);
  options.audit_hash = [](const std::string& bytes) { return Blake2bHex(bytes); };
  if (!config.rates_file.empty()) {
    auto metering = OpenMetering(config.rates_file, config.data);
    if (!metering) return Err(metering.error());
    options.metering = *metering;
    options.scheduler.gate = std::make_shared<BudgetGateFactory>(options.metering->shared_billing());
  }
  return options;
}

Result<ApiOptions> ApiOptionsOf(const DaemonConfig& config, const std::string& host, int port) {
  if (config.tls_cert.empty() != config.tls_key.empty()) return Err(InvalidArgument("--tls-cert and --tls-key go together"));
  ApiOptions api_options{host, port};
  api_options.rate_per_second = config.rate_limit;
  api_options.rate_burst = 2 * config.rate_limit;
  api_options.tls_cert = config.tls_cert;
  api_options.tls_key = config.tls_key;
  api_options.log = [](const std::string& line) { std::cerr << "allotd: " + line + "\n"; };
  api_options.agents = std::make_shared<AgentRegistry>();
  api_options.log_dir = (std::filesystem::path(config.data) / "logs").string();
  api_options.node_timeout_ms = config.node_timeout_ms;
  api_options.max_connections = std::min(api_options.max_connections, RaiseFileLimit());
  return api_options;
}

}  // namespace

int main(int argc, char** argv) {
  // The journal and its -wal/-shm, task logs, keys: every tenant's data, for allotd's user only.
  ::umask(077);
  CLI::App app{"allotd: the allot control-plane daemon"};
  CommandLine cl;
  AddFlags(app, cl);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  auto fail = [](const std::string& msg) {
    std::cerr << "allotd: " << msg << "\n";
    return 2;
  };
  auto loaded = ApplyFlags(app, cl.flags, cl.config_file, cl.pass_interval, cl.node_timeout, cl.history_interval);
  if (!loaded) return fail(loaded.error().message());
  const DaemonConfig config = std::move(*loaded);
  auto address = ParseListen(config.listen);
  if (!address) return fail(address.error().message());
  const auto& [host, port] = *address;
  std::optional<WebhookUrl> webhook;
  if (!config.alert_webhook.empty()) {
    const std::string field = app.count("--alert-webhook") > 0 ? "--alert-webhook" : config.file + ": alert_webhook";
    auto url = ParseWebhookUrl(config.alert_webhook, field);
    if (!url) return fail(url.error().message());
    webhook = *url;
  }
  if (!config.alert_webhook_ca.empty() && !std::ifstream(config.alert_webhook_ca)) {
    const std::string field = app.count("--alert-webhook-ca") > 0 ? "--alert-webhook-ca" : config.file + ": alert_webhook_ca";
    return fail(field + ": cannot read '" + config.alert_webhook_ca + "'; expected a PEM file of certificate authorities");
  }
  auto opened = OpenDataJournal(config, cl.init_fresh);
  if (!opened) return fail(opened.error().message());
  auto api_options = ApiOptionsOf(config, host, port);
  if (api_options) api_options->cluster_port_base = cl.cluster_port_base;
  if (!api_options) return fail(api_options.error().message());
  // Each dedicated Slurm window's munge key is derived from it (server/cluster_wire.h).
  auto cluster_key = LoadOrCreateClusterKey(config.data);
  if (!cluster_key) return fail(cluster_key.error().message());
  api_options->cluster_secret = std::move(*cluster_key);
  auto lead = ParseDurationMs(cl.acceptance_lead);
  if (!lead || *lead < 60000) {
    return fail("--acceptance-lead: '" + cl.acceptance_lead + "' is not valid; expected a duration of at least 1m, such as 10m");
  }
  api_options->acceptance_lead_ms = *lead;
  if (!config.metrics_listen.empty()) {
    auto metrics_address = ParseListen(config.metrics_listen);
    if (!metrics_address) return fail("metrics_" + metrics_address.error().message());
    api_options->metrics_host = metrics_address->first;
    api_options->metrics_port = metrics_address->second;
  }
  api_options->metrics = std::make_shared<DaemonMetrics>();
  api_options->history = std::make_shared<History>(config.history_interval_ms);
  InterferenceConfig interference;
  auto quiet = ParseDurationMs(cl.interference_quiet);
  if (!quiet || *quiet < 1000) {
    return fail("--interference-quiet: '" + cl.interference_quiet + "' is not valid; expected a duration of at least 1s, such as 60s");
  }
  interference.quiet_ms = *quiet;
  interference.onset_samples = cl.interference_onset;

  // Signals are taken by sigwait below, not by whichever thread they land on.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto options = ControllerOptionsOf(config);
  if (!options) return fail(options.error().message());
  options->metrics = api_options->metrics;
  Controller controller(std::move(opened->journal), WallMs, *options);
  if (Status s = controller.Start(); !s.ok()) return fail(s.message());
  if (opened->fresh) {
    auto token_file = Bootstrap(controller, config);
    if (!token_file) return fail(token_file.error().message());
    std::cerr << "allotd: new journal; the platform-admin token is in " << *token_file << " (mode 0600)\n";
  } else if (!config.tenants_file.empty() || !config.tenants.empty() || !config.fleet_file.empty()) {
    std::cerr << "allotd: state restored from " << opened->shown << " (" << controller.last_seq()
              << " events); tenants and a simulated fleet seed only a new journal\n";
  }

  api_options->interference = std::make_shared<InterferenceMonitor>(
      controller, interference, [](const std::string& line) { std::cerr << "allotd: " << line << "\n"; });
  NodeSupervisor supervisor(controller, api_options->agents, config.node_timeout_ms);
  supervisor.Start();
  AcceptanceSupervisor acceptance(controller, api_options->agents, *lead);
  acceptance.Start();
  AlertMonitorOptions alert_options;
  alert_options.thresholds = config.alerts;
  alert_options.load_zone = LoadTimeZone;
  alert_options.log = api_options->log;
  alert_options.webhook = webhook;
  alert_options.delivery.ca_cert = config.alert_webhook_ca;
  api_options->alerts = std::make_shared<AlertMonitor>(controller, api_options->agents, std::move(alert_options));
  api_options->alerts->Start();
  // The dashboard's charts: a sample now, then one every interval (daemon/history.h).
  auto sample = [&controller, history = api_options->history] {
    history->Add(controller.Read([&](const ClusterState& st) { return SampleHistory(st, controller.now_ms()); }));
  };
  sample();
  Periodic history_sampler;
  history_sampler.Start(std::chrono::milliseconds(config.history_interval_ms), sample);
  // The services' autoscaler: the replicas' loads come with heartbeats; it decides every second.
  api_options->autoscale = std::make_shared<AutoscaleMonitor>(controller);
  Periodic autoscaler;
  autoscaler.Start(std::chrono::milliseconds(1000), [&controller, a = api_options->autoscale] { a->Tick(controller.now_ms()); });
  ApiServer api(controller, *api_options);
  if (Status s = api.Start(); !s.ok()) return fail(s.message());
  std::cerr << "allotd: serving " << (config.tls_cert.empty() ? "http" : "https") << "://" << host << ":" << api.port()
            << "/v1 and the dashboard at / (journal " << opened->shown << ", " << controller.last_seq() << " events"
            << (options->simulate_runs ? ", simulated fleet" : "") << ")\n";
  if (api.metrics_port() >= 0) {
    std::cerr << "allotd: serving http://" << api_options->metrics_host << ":" << api.metrics_port() << "/metrics (no token)\n";
  }

  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "allotd: " << (sig == SIGINT ? "interrupted" : "terminated") << "; stopping\n";
  api.Stop();
  history_sampler.Stop();
  autoscaler.Stop();
  api_options->alerts->Stop();
  acceptance.Stop();
  supervisor.Stop();
  controller.Stop();
  return 0;
}
