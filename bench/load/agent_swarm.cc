// A swarm of simulated node agents against one allotd (issue 19): N agents in one process on
// one event-driven client (Boost.Asio/Beast, one thread), each speaking the real protocol with
// the real wire types (wire/agent_messages.h), as allot-agent does:
//
//   - POST /v1/agent/register with an inventory of G H100s, then an acceptance health report in
//     the first heartbeat (accepting → ready);
//   - POST /v1/agent/heartbeat every heartbeat_ms (1 s) with every GPU's telemetry and every task
//     (running, or exited and not yet answered), and at once when a task exits;
//   - GET /v1/agent/assignments?node=&version=&wait= (a long poll) on its own connection; a new
//     task "runs" for the duration its command declares (`sleep S`; anything else exits at once),
//     exits 0 and is reported; a task allotd stops asking for is killed; a preempted one stops now;
//   - fencing as allot-agent does it: a 404/409 heartbeat answer, or no heartbeat answered within
//     the lease, kills every task (unreported) and registers again.
//
//   agent_swarm --server http://127.0.0.1:7070 --token-file FILE --agents N --duration 60s
//               [--gpus-per-node 8] [--prefix swarm-] [--poll-wait 30] [--ramp 10s]
//               [--allotd-pid PID] [--report FILE.json] [--threads 1]
//
// Prints one line: `agents N  heartbeats/s H  heartbeat p99 X ms  assignment p99 Y ms  errors E
// allotd rss R MiB  cpu C%`. Heartbeat latency: the request written to its answer read (on a
// connection already open). Assignment latency: an assignment's arrival (wall clock) less its
// started_ms (the pass that placed it, by allotd's clock; same machine). Errors: answers other
// than 200, unreadable answers, timeouts; a connection refused or reset (allotd restarting) is
// counted as a reconnect instead, and the agent retries. allotd's RSS is its peak (VmHWM, sampled
// every second, across restarts: --allotd-pid, or found by the port in /proc/*/cmdline), its CPU
// the share of one core it used over the run. --report writes the details (percentiles,
// reconnects, fences, every task run started) as JSON: the driver (bench/swarm_bench.py) checks
// from it that no task run started twice.
#include <algorithm>
#include <atomic>
#include <utility>
#include <sys/resource.h>
#include <thread>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "wire/agent_messages.h"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using allot::Json;

namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}
// Set by the main thread while measuring; agents on every thread read it.
std::atomic<bool> g_measuring{false};
std::atomic<int> g_registered{0};  // agents registered at least once

double SteadyS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  std::string host = "127.0.0.1", port = "7070", token, prefix = "swarm-", report;
  int agents = 100, gpus = 8, poll_wait_s = 30;
  double duration_s = 60, ramp_s = 10;
  int threads = 1;
  int allotd_pid = 0;
};

struct Stats {
  std::vector<float> heartbeat_ms, assignment_ms;
  uint64_t heartbeats_ok = 0, errors = 0, reconnects = 0, fences = 0, registrations = 0, skipped_beats = 0;
  uint64_t tasks_started = 0, tasks_exited = 0, tasks_killed = 0, tasks_preempted = 0;
  std::map<std::string, std::string> first_errors;  // a few, by kind
  // Every task run started: "j<id>.<task>.r<run>" → the agent that started it, and how many times.
  std::map<std::string, std::pair<std::string, int>> starts;
  void Error(const std::string& kind, const std::string& what) {
    ++errors;
    if (first_errors.size() < 8 && !first_errors.count(kind)) first_errors[kind] = what;
  }
};

// A ParseDuration of "60s", "2m", "1h" or plain seconds.
double Seconds(const std::string& v) {
  double n = std::stod(v);
  char unit = v.empty() ? 's' : v.back();
  if (unit == 'm') return n * 60;
  if (unit == 'h') return n * 3600;
  return n;
}

// One keep-alive HTTP/1.1 connection: one exchange at a time; reconnects when closed.
class Conn {
 public:
  using Done = std::function<void(beast::error_code, int status, std::string body, double seconds)>;
  Conn(net::io_context& io, const tcp::endpoint& at, const std::string& token) : at_(at), token_(token), stream_(io) {}
  bool busy() const { return busy_; }

  void Exchange(http::verb verb, std::string target, std::string body, std::chrono::seconds timeout, Done done) {
    busy_ = true;
    req_ = {};
    req_.method(verb);
    req_.target(target);
    req_.version(11);
    req_.set(http::field::host, "allotd");
    req_.set(http::field::authorization, "Bearer " + token_);
    req_.keep_alive(true);
    if (verb == http::verb::post) {
      req_.set(http::field::content_type, "application/json");
      req_.body() = std::move(body);
    }
    req_.prepare_payload();
    timeout_ = timeout;
    done_ = std::move(done);
    if (open_) return Write();
    stream_.expires_after(std::chrono::seconds(5));
    stream_.async_connect(at_, [this](beast::error_code ec) {
      if (ec) return Finish(ec);
      stream_.socket().set_option(tcp::no_delay(true));
      open_ = true;
      Write();
    });
  }

 private:
  void Write() {
    start_ = SteadyS();
    stream_.expires_after(timeout_);
    http::async_write(stream_, req_, [this](beast::error_code ec, size_t) {
      if (ec) return Finish(ec);
      parser_.emplace();
      parser_->body_limit(64 << 20);
      http::async_read(stream_, buf_, *parser_, [this](beast::error_code ec, size_t) { Finish(ec); });
    });
  }
  void Finish(beast::error_code ec) {
    busy_ = false;
    double took = SteadyS() - start_;
    if (ec) {
      stream_.close();
      buf_.clear();
      open_ = false;
      auto done = std::move(done_);
      return done(ec, 0, "", took);
    }
    auto res = parser_->release();
    if (!res.keep_alive()) {
      stream_.close();
      buf_.clear();
      open_ = false;
    }
    auto done = std::move(done_);
    done(ec, res.result_int(), std::move(res.body()), took);
  }

  tcp::endpoint at_;
  std::string token_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::chrono::seconds timeout_{10};
  Done done_;
  double start_ = 0;
  bool open_ = false, busy_ = false;
};

// A transport failure: allotd gone (restarting) rather than a wrong answer.
bool Gone(beast::error_code ec) {
  return ec == net::error::connection_refused || ec == net::error::connection_reset || ec == http::error::end_of_stream ||
         ec == net::error::eof || ec == net::error::broken_pipe || ec == http::error::partial_message;
}

class Agent {
 public:
  Agent(net::io_context& io, const tcp::endpoint& at, const Options& o, int index, Stats& stats)
      : io_(io), o_(o), stats_(stats), hb_(io, at, o.token), poll_(io, at, o.token), beat_(io), retry_(io), poll_retry_(io) {
    char name[64];
    std::snprintf(name, sizeof name, "%s%05d", o.prefix.c_str(), index);
    name_ = name;
    zone_ = "z" + std::to_string(index / 1600);
    rack_ = "r" + std::to_string(index / 32);
  }

  void Start(double delay_s) {
    retry_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(delay_s * 1000)));
    retry_.async_wait([this](beast::error_code ec) {
      if (!ec) Register();
    });
  }


 private:
  struct Local {
    allot::Assignment a;
    std::optional<allot::TaskReport> exit;
    bool reported = false;
    std::shared_ptr<net::steady_timer> timer;
  };

  void Register() {
    allot::NodeSpec spec;
    spec.name = name_;
    spec.zone = zone_;
    spec.rack = rack_;
    spec.cpu = 96000;
    spec.memory = 1024 * 1024;
    allot::AgentIdentity id{name_, "agent_swarm", "550.54.15"};
    std::vector<Json> gpus;
    for (int g = 0; g < o_.gpus; ++g) {
      std::vector<int> peers;
      for (int p = 0; p < o_.gpus; ++p) {
        if (p != g) peers.push_back(p);
      }
      gpus.push_back({{"index", g}, {"uuid", Uuid(g)}, {"model", "H100-80GB"}, {"memory_mib", 81559},
                      {"pci_bus_id", "00000000:" + std::to_string(10 + g) + ":00.0"}, {"numa_node", g / 4}, {"nvlink_peers", peers}});
    }
    hb_.Exchange(http::verb::post, "/v1/agent/register", allot::RegistrationJson(spec, id, gpus).dump(), std::chrono::seconds(30),
                 [this](beast::error_code ec, int status, std::string body, double) {
                   if (ec || status != 200) {
                     if (ec && Gone(ec)) {
                       ++stats_.reconnects;
                     } else {
                       stats_.Error("register", ec ? ec.message() : std::to_string(status) + " " + body.substr(0, 200));
                     }
                     retry_.expires_after(std::chrono::seconds(1));
                     retry_.async_wait([this](beast::error_code e) {
                       if (!e) Register();
                     });
                     return;
                   }
                   Json b = Json::parse(body, nullptr, false);
                   lease_ms_ = b.is_object() ? b.value("lease_ms", int64_t{10000}) : 10000;
                   heartbeat_ms_ = b.is_object() ? b.value("heartbeat_ms", int64_t{1000}) : 1000;
                   ++stats_.registrations;
                   if (!ever_registered_) {
                     ever_registered_ = true;
                     ++g_registered;
                   }
                   registered_ = true;
                   fenced_ = false;
                   last_ok_ = WallMs();
                   acceptance_ = true;
                   version_.clear();
                   desired_.reset();  // wait for an answer given after the registration
                   next_beat_ = std::chrono::steady_clock::now();
                   Beat();
                   if (!polling_) {
                     polling_ = true;
                     Poll();
                   }
                 });
  }

  std::string Uuid(int g) const {
    char u[64];
    std::snprintf(u, sizeof u, "GPU-%08x-%04x-0000-0000-%012d", static_cast<unsigned>(std::hash<std::string>{}(name_)), g, g);
    return u;
  }

  // The next beat at its time (one per heartbeat_ms, not drifting); `now`: at once.
  void Schedule(bool now) {
    auto at = now ? std::chrono::steady_clock::now() : next_beat_;
    beat_.expires_at(at);
    beat_.async_wait([this](beast::error_code ec) {
      if (!ec) Beat();
    });
  }

  void Beat() {
    if (!registered_) return;
    auto now = std::chrono::steady_clock::now();
    if (now >= next_beat_) next_beat_ += std::chrono::milliseconds(heartbeat_ms_);
    if (next_beat_ < now) next_beat_ = now + std::chrono::milliseconds(heartbeat_ms_);
    if (hb_.busy()) {
      ++stats_.skipped_beats;
      beat_again_ = true;
      return;
    }
    allot::Heartbeat hb;
    hb.node = name_;
    int64_t t = WallMs();
    for (int g = 0; g < o_.gpus; ++g) {
      allot::GpuTelemetry gt;
      gt.index = g;
      gt.uuid = Uuid(g);
      bool busy = gpu_busy_.count(g) > 0;
      gt.utilization_percent = busy ? 90 + (t / 1000 + g) % 10 : 0;
      gt.memory_used_mib = busy ? 60000 : 0;
      gt.power_mw = busy ? 650000 : 70000;
      gt.temperature_c = busy ? 71 : 34;
      gt.ecc_corrected = 0;
      gt.ecc_uncorrected = 0;
      gt.retired_pages = 0;
      hb.gpus.push_back(std::move(gt));
    }
    std::vector<std::string> sent_exits;
    for (auto& [key, l] : tasks_) {
      if (l.exit) {
        hb.tasks.push_back(*l.exit);
        sent_exits.push_back(key);
      } else {
        hb.tasks.push_back(allot::ReportOn(l.a));
      }
    }
    if (acceptance_) hb.health = allot::HealthReport{0, true, t, {{"nvml.ecc", true, "", ""}}};
    bool sent_acceptance = acceptance_;
    int64_t sent_at = t;
    hb_.Exchange(http::verb::post, "/v1/agent/heartbeat", allot::HeartbeatJson(hb).dump(), std::chrono::seconds(10),
                 [this, sent_exits, sent_acceptance, sent_at](beast::error_code ec, int status, std::string body, double took) {
                   if (ec || status != 200) {
                     if (!ec && (status == 404 || status == 409)) {
                       Fence("allotd answered " + std::to_string(status) + " " + body.substr(0, 160));
                       return;
                     }
                     if (ec && Gone(ec)) {
                       ++stats_.reconnects;
                     } else {
                       stats_.Error("heartbeat", ec ? ec.message() : std::to_string(status) + " " + body.substr(0, 200));
                     }
                     if (WallMs() - last_ok_ > lease_ms_) return Fence("no heartbeat answered within the lease");
                     return After();
                   }
                   if (g_measuring.load(std::memory_order_relaxed)) {
                     ++stats_.heartbeats_ok;
                     stats_.heartbeat_ms.push_back(static_cast<float>(took * 1000));
                   }
                   last_ok_ = sent_at;
                   if (sent_acceptance) acceptance_ = false;
                   for (const std::string& k : sent_exits) {
                     auto it = tasks_.find(k);
                     if (it != tasks_.end()) it->second.reported = true;
                   }
                   Forget();
                   After();
                 });
  }

  void After() {
    if (!registered_) return;
    if (beat_again_) {
      beat_again_ = false;
      return Schedule(true);
    }
    Schedule(false);
  }

  // As allot-agent: every task killed, none reported (allotd requeues them), registered again.
  void Fence(const std::string& why) {
    ++stats_.fences;
    if (stats_.first_errors.size() < 8 && !stats_.first_errors.count("fence")) stats_.first_errors["fence"] = name_ + ": " + why;
    for (auto& [key, l] : tasks_) {
      if (l.timer) l.timer->cancel();
    }
    tasks_.clear();
    gpu_busy_.clear();
    registered_ = false;
    fenced_ = true;
    beat_.cancel();
    retry_.expires_after(std::chrono::milliseconds(200));
    retry_.async_wait([this](beast::error_code e) {
      if (!e) Register();
    });
  }

  void Poll() {
    std::string target = "/v1/agent/assignments?node=" + name_ + "&version=" + version_ + "&wait=" + std::to_string(o_.poll_wait_s);
    poll_.Exchange(http::verb::get, target, "", std::chrono::seconds(o_.poll_wait_s + 15),
                   [this](beast::error_code ec, int status, std::string body, double) {
                     if (ec || status != 200) {
                       version_.clear();
                       if (ec && Gone(ec)) {
                         ++stats_.reconnects;
                       } else if (status != 404 || registered_) {  // 404 before a (re-)registration is expected
                         stats_.Error("assignments", ec ? ec.message() : std::to_string(status) + " " + body.substr(0, 200));
                       }
                       poll_retry_.expires_after(std::chrono::milliseconds(500));
                       poll_retry_.async_wait([this](beast::error_code e) {
                         if (!e) Poll();
                       });
                       return;
                     }
                     int64_t now = WallMs();
                     Json b = Json::parse(body, nullptr, false);
                     auto tasks = allot::ParseAssignments(b);
                     if (!tasks || !b.is_object()) {
                       stats_.Error("assignments", tasks ? "not JSON" : tasks.error().message());
                       version_.clear();
                     } else {
                       version_ = b.value("version", "");
                       desired_ = std::move(*tasks);
                       Reconcile(now);
                     }
                     Poll();
                   });
  }

  void Reconcile(int64_t now) {
    if (!desired_ || fenced_ || !registered_) return;
    std::set<std::string> wanted;
    bool exits = false;
    for (const allot::Assignment& a : *desired_) {
      std::string key = a.key();
      wanted.insert(key);
      auto it = tasks_.find(key);
      if (it == tasks_.end()) {
        StartTask(a, now);
        continue;
      }
      Local& l = it->second;
      if (a.preempt_deadline_ms >= 0 && !l.exit) {
        Exit(l, now, 0, SIGTERM, true);
        ++stats_.tasks_preempted;
        exits = true;
      }
    }
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      Local& l = it->second;
      if (wanted.count(it->first)) {
        ++it;
      } else if (!l.exit) {
        Exit(l, now, -1, SIGKILL, false);
        ++stats_.tasks_killed;
        exits = true;
        ++it;
      } else if (l.reported) {
        it = tasks_.erase(it);
      } else {
        ++it;
      }
    }
    if (exits) BeatNow();
  }

  void Forget() {
    if (!desired_) return;
    std::set<std::string> wanted;
    for (const allot::Assignment& a : *desired_) wanted.insert(a.key());
    std::erase_if(tasks_, [&](const auto& kv) { return kv.second.exit && kv.second.reported && !wanted.count(kv.first); });
  }

  void StartTask(const allot::Assignment& a, int64_t now) {
    std::string key = a.key();
    auto& [who, n] = stats_.starts[key];
    if (n++ > 0) {
      stats_.Error("twice", "task run " + key + " (" + a.job + ") started again on " + name_ + ", first on " + who);
    }
    who = name_;
    ++stats_.tasks_started;
    if (g_measuring.load(std::memory_order_relaxed)) stats_.assignment_ms.push_back(static_cast<float>(std::max<int64_t>(0, now - a.started_ms)));
    Local& l = tasks_[key];
    l.a = a;
    for (int g : a.gpus) gpu_busy_.insert(g);
    // The declared duration: `sleep S`.
    double s = 0;
    if (a.command.size() == 2 && a.command[0] == "sleep") s = std::strtod(a.command[1].c_str(), nullptr);
    l.timer = std::make_shared<net::steady_timer>(io_);
    l.timer->expires_after(std::chrono::milliseconds(static_cast<int64_t>(s * 1000)));
    l.timer->async_wait([this, key](beast::error_code ec) {
      if (ec) return;
      auto it = tasks_.find(key);
      if (it == tasks_.end() || it->second.exit) return;
      Exit(it->second, WallMs(), 0, 0, false);
      ++stats_.tasks_exited;
      BeatNow();  // as allot-agent: its GPUs go to the next job without waiting a beat
    });
  }

  void Exit(Local& l, int64_t now, int code, int signal, bool preempted) {
    if (l.timer) l.timer->cancel();
    allot::TaskReport r = allot::ReportOn(l.a);
    r.exited = true;
    r.exit_code = code;
    r.signal = signal;
    r.preempted = preempted;
    r.reason = signal ? "killed by signal " + std::to_string(signal) : "exited with code " + std::to_string(code);
    r.started_ms = l.a.started_ms;
    r.ended_ms = std::max(now, l.a.started_ms);
    l.exit = std::move(r);
    for (int g : l.a.gpus) gpu_busy_.erase(g);
  }

  void BeatNow() {
    if (!registered_) return;
    if (hb_.busy()) {
      beat_again_ = true;
      return;
    }
    beat_.cancel();
    Schedule(true);
  }

  net::io_context& io_;
  const Options& o_;
  Stats& stats_;
  std::string name_, zone_, rack_;
  Conn hb_, poll_;
  net::steady_timer beat_, retry_, poll_retry_;
  std::chrono::steady_clock::time_point next_beat_;
  int64_t lease_ms_ = 10000, heartbeat_ms_ = 1000, last_ok_ = 0;
  bool registered_ = false, ever_registered_ = false, fenced_ = false, polling_ = false, acceptance_ = false, beat_again_ = false;
  std::string version_;
  std::optional<std::vector<allot::Assignment>> desired_;
  std::map<std::string, Local> tasks_;
  std::set<int> gpu_busy_;
};

// allotd's pid: the process whose command line is allotd's and listens on `port`.
int FindAllotd(const std::string& port) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string pid = e.path().filename();
    if (pid.empty() || !std::isdigit(static_cast<unsigned char>(pid[0]))) continue;
    std::ifstream f(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), {});
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find("allotd ") == std::string::npos) continue;
    if (cmd.find(":" + port + " ") == std::string::npos) continue;
    return std::stoi(pid);
  }
  return 0;
}

struct Proc {
  int64_t ticks = -1;  // utime + stime
  int64_t rss_kib = 0, hwm_kib = 0;
};
Proc ReadProc(int pid) {
  Proc p;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), {});
  auto close = s.rfind(')');
  if (close == std::string::npos) return p;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  std::vector<std::string> f;
  while (in >> field) f.push_back(field);
  if (f.size() < 13) return p;
  p.ticks = std::stoll(f[11]) + std::stoll(f[12]);  // fields 14 and 15, counting from the state (3)
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) p.rss_kib = std::stoll(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) p.hwm_kib = std::stoll(line.substr(6));
  }
  return p;
}

// CPU and memory of allotd, sampled every second, across restarts (a new pid starts a new count).
struct AllotdWatch {
  std::string port;
  int fixed_pid = 0, pid = 0;
  int64_t last_ticks = -1, used_ticks = 0;
  int64_t peak_kib = 0;
  void Sample(bool count) {
    int now_pid = fixed_pid ? fixed_pid : FindAllotd(port);
    if (now_pid != pid) {
      pid = now_pid;
      last_ticks = -1;
    }
    if (!pid) return;
    Proc p = ReadProc(pid);
    if (p.ticks < 0) {
      pid = 0;
      return;
    }
    if (last_ticks >= 0 && count) used_ticks += p.ticks - last_ticks;
    last_ticks = p.ticks;
    peak_kib = std::max({peak_kib, p.hwm_kib, p.rss_kib});
  }
};

float Pct(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100 * v.size()));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

int Usage(const std::string& why) {
  std::cerr << "agent_swarm: " << why
            << "\nusage: agent_swarm --server http://HOST:PORT --token-file FILE --agents N --duration D [--gpus-per-node 8]"
               " [--prefix swarm-] [--poll-wait 30] [--ramp 10s] [--allotd-pid PID] [--report FILE] [--threads 1]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string server, token_file;
  bool have_duration = false;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (i + 1 >= argc) return Usage(k + ": expected a value");
    std::string v = argv[i + 1];
    try {
      if (k == "--server") server = v;
      else if (k == "--token-file") token_file = v;
      else if (k == "--agents") o.agents = std::stoi(v);
      else if (k == "--duration") o.duration_s = Seconds(v), have_duration = true;
      else if (k == "--gpus-per-node") o.gpus = std::stoi(v);
      else if (k == "--prefix") o.prefix = v;
      else if (k == "--poll-wait") o.poll_wait_s = std::stoi(v);
      else if (k == "--ramp") o.ramp_s = Seconds(v);
      else if (k == "--allotd-pid") o.allotd_pid = std::stoi(v);
      else if (k == "--report") o.report = v;
      else if (k == "--threads") o.threads = std::stoi(v);
      else return Usage("unknown option " + k);
    } catch (const std::exception&) {
      return Usage(k + ": '" + v + "' is not a number");
    }
  }
  if (server.rfind("http://", 0) != 0) return Usage("--server: '" + server + "': expected http://HOST:PORT");
  std::string hostport = server.substr(7);
  while (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos) return Usage("--server: '" + server + "': expected http://HOST:PORT");
  o.host = hostport.substr(0, colon);
  o.port = hostport.substr(colon + 1);
  std::ifstream(token_file) >> o.token;
  if (o.token.empty()) return Usage("--token-file: '" + token_file + "': no token in it");
  if (o.agents < 1 || o.agents > 99999) return Usage("--agents: expected 1 to 99999");
  if (!have_duration || o.duration_s <= 0) return Usage("--duration: expected a duration such as 60s");
  if (o.gpus < 1 || o.gpus > 64) return Usage("--gpus-per-node: expected 1 to 64");
  if (o.threads < 1 || o.threads > 64) return Usage("--threads: expected 1 to 64");

  // Each thread its own io_context and agents (every T-th), merged at the end.
  struct Shard {
    net::io_context io{1};
    Stats stats;
    std::deque<Agent> agents;
  };
  std::vector<std::unique_ptr<Shard>> shards;
  tcp::endpoint at;
  {
    net::io_context io;
    tcp::resolver resolver(io);
    at = *resolver.resolve(o.host, o.port).begin();
  }
  for (int t = 0; t < o.threads; ++t) shards.push_back(std::make_unique<Shard>());
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> jitter(0, 1);
  for (int i = 0; i < o.agents; ++i) {
    Shard& sh = *shards[i % o.threads];
    sh.agents.emplace_back(sh.io, at, o, i, sh.stats);
    sh.agents.back().Start(o.ramp_s * (i + jitter(rng)) / o.agents);
  }
  std::vector<std::thread> threads;
  for (auto& sh : shards) {
    threads.emplace_back([&sh] {
      auto guard = net::make_work_guard(sh->io);
      sh->io.run();
    });
  }

  // Measuring starts once every agent has registered (or the ramp is twice over), and lasts
  // --duration.
  AllotdWatch watch{o.port, o.allotd_pid};
  double t0 = SteadyS(), measure_from = 0, measure_to = 0;
  auto self_cpu = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  double cpu_from = 0;
  for (;;) {
    double now = SteadyS();
    if (!g_measuring && measure_from == 0) {
      int ready = g_registered.load();
      if (ready == o.agents || now - t0 > 2 * o.ramp_s + 30) {
        g_measuring = true;
        measure_from = now;
        cpu_from = self_cpu();
        std::fprintf(stderr, "agent_swarm: %d of %d agents registered after %.1f s; measuring for %.0f s\n", ready, o.agents,
                     now - t0, o.duration_s);
      }
    } else if (g_measuring && now - measure_from >= o.duration_s) {
      g_measuring = false;
      measure_to = now;
      watch.Sample(true);
      break;
    }
    watch.Sample(g_measuring);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  double swarm_cpu = 100 * (self_cpu() - cpu_from) / (measure_to - measure_from);
  for (auto& sh : shards) sh->io.stop();
  for (std::thread& t : threads) t.join();
  Stats stats;
  for (auto& sh : shards) {
    Stats& s = sh->stats;
    stats.heartbeat_ms.insert(stats.heartbeat_ms.end(), s.heartbeat_ms.begin(), s.heartbeat_ms.end());
    stats.assignment_ms.insert(stats.assignment_ms.end(), s.assignment_ms.begin(), s.assignment_ms.end());
    stats.heartbeats_ok += s.heartbeats_ok;
    stats.errors += s.errors;
    stats.reconnects += s.reconnects;
    stats.fences += s.fences;
    stats.registrations += s.registrations;
    stats.skipped_beats += s.skipped_beats;
    stats.tasks_started += s.tasks_started;
    stats.tasks_exited += s.tasks_exited;
    stats.tasks_killed += s.tasks_killed;
    stats.tasks_preempted += s.tasks_preempted;
    for (const auto& [k, v] : s.first_errors) stats.first_errors.emplace(k, v);
    for (const auto& [key, st] : s.starts) {
      auto [it, fresh] = stats.starts.emplace(key, st);
      if (!fresh) {  // started on agents of two threads
        it->second.second += st.second;
        stats.Error("twice", "task run " + key + " started on " + it->second.first + " and on " + st.first);
      }
    }
  }

  double window = measure_to - measure_from;
  double hz = window > 0 ? stats.heartbeats_ok / window : 0;
  double cpu = window > 0 ? 100.0 * static_cast<double>(watch.used_ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / window : 0;
  size_t beats = stats.heartbeat_ms.size(), assigns = stats.assignment_ms.size();
  float hb50 = Pct(stats.heartbeat_ms, 50), hb99 = Pct(stats.heartbeat_ms, 99), hbmax = Pct(stats.heartbeat_ms, 100);
  float as50 = Pct(stats.assignment_ms, 50), as99 = Pct(stats.assignment_ms, 99), asmax = Pct(stats.assignment_ms, 100);
  int duplicates = 0;
  for (const auto& [key, s] : stats.starts) duplicates += s.second > 1;
  std::printf("agents %d  heartbeats/s %.0f  heartbeat p99 %.1f ms  assignment p99 %.1f ms  errors %llu  allotd rss %lld MiB  cpu %.0f%%\n",
              o.agents, hz, hb99, as99, static_cast<unsigned long long>(stats.errors), static_cast<long long>(watch.peak_kib / 1024), cpu);
  std::fflush(stdout);
  std::fprintf(stderr,
               "agent_swarm: heartbeats %zu (p50 %.1f, max %.1f ms, %llu skipped: the previous still out); assignments %zu "
               "(p50 %.1f, max %.1f ms); task runs started %llu (%d twice), exited %llu, killed %llu, preempted %llu; "
               "registrations %llu, fences %llu, reconnects %llu; the swarm used %.0f%% of a core on %d thread(s)\n",
               beats, hb50, hbmax, static_cast<unsigned long long>(stats.skipped_beats), assigns, as50, asmax,
               static_cast<unsigned long long>(stats.tasks_started), duplicates, static_cast<unsigned long long>(stats.tasks_exited),
               static_cast<unsigned long long>(stats.tasks_killed), static_cast<unsigned long long>(stats.tasks_preempted),
               static_cast<unsigned long long>(stats.registrations), static_cast<unsigned long long>(stats.fences),
               static_cast<unsigned long long>(stats.reconnects), swarm_cpu, o.threads);
  for (const auto& [kind, what] : stats.first_errors) std::fprintf(stderr, "agent_swarm: first %s error: %s\n", kind.c_str(), what.c_str());
  if (!o.report.empty()) {
    Json starts = Json::object();
    for (const auto& [key, s] : stats.starts) starts[key] = {{"agent", s.first}, {"times", s.second}};
    Json r = {{"agents", o.agents}, {"window_s", window}, {"heartbeats_per_s", hz},
              {"heartbeat_ms", {{"p50", hb50}, {"p99", hb99}, {"max", hbmax}, {"count", beats}}},
              {"assignment_ms", {{"p50", as50}, {"p99", as99}, {"max", asmax}, {"count", assigns}}},
              {"errors", stats.errors}, {"first_errors", stats.first_errors}, {"reconnects", stats.reconnects},
              {"fences", stats.fences}, {"registrations", stats.registrations}, {"skipped_beats", stats.skipped_beats},
              {"tasks_started", stats.tasks_started}, {"tasks_exited", stats.tasks_exited}, {"tasks_killed", stats.tasks_killed},
              {"tasks_preempted", stats.tasks_preempted}, {"started_twice", duplicates},
              {"allotd_peak_rss_mib", watch.peak_kib / 1024}, {"allotd_cpu_percent", cpu}, {"swarm_cpu_percent", swarm_cpu},
              {"threads", o.threads}, {"starts", starts}};
    std::ofstream(o.report) << r.dump(1) << "\n";
  }
  // Nothing measured is a failure, not a figure.
  if (beats == 0) {
    std::fprintf(stderr, "agent_swarm: no heartbeat answered while measuring; nothing measured\n");
    return 1;
  }
  return 0;
}
