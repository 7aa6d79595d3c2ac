// allotd as a real process: first start mints the admin token (0600) and seeds the journal;
// submissions over HTTP are durable — after `kill -9` mid-stream and a restart, every
// acknowledged job is there exactly once, and the served state equals a replay of the journal.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "state/cluster_state.h"
#include "store/sqlite_journal.h"
#include "testing/free_port.h"
#include "testing/allotd_process.h"
#include "testing/private_postgres.h"
#include "testing/scratch_dir.h"

namespace allot {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class AllotdTest : public ::testing::Test {
 protected:
  void SetUp() override { port_ = testing::FreeListenPort(); }
  void TearDown() override { Kill(SIGKILL); }
  // Starts allotd on the fixture's port and data directory; `args` default to the example
  // scenario's tenants and simulated fleet.
  void Launch(std::vector<std::string> args = {}) {
    std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
    if (args.empty()) args = {"--tenants", example, "--simulated-fleet", example};
    args.insert(args.begin(), {"--listen", "127.0.0.1:" + std::to_string(port_), "--data", dir_.path().string()});
    pid_ = testing::LaunchAllotd(std::move(args), dir_ / "allotd.log", port_);
    ASSERT_GT(pid_, 0);
  }
  void Kill(int sig) { testing::StopProcess(pid_, sig); }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", port_);
    std::ifstream in(dir_ / "admin-token");
    std::string token;
    in >> token;
    c.set_bearer_token_auth(token.c_str());
    c.set_connection_timeout(2);
    return c;
  }

  testing::ScratchDir dir_{"allotd"};
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(AllotdTest, AcknowledgedSubmissionsSurviveKillNineAndTheStateEqualsAReplay) {
  // Snapshots every 100 events: the restart restores one and replays the tail after it.
  std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
  std::vector<std::string> args = {"--tenants", example, "--simulated-fleet", example, "--snapshot-every", "100"};
  Launch(args);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "admin-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the admin token is readable by its owner only";
  EXPECT_EQ(Client().Get("/v1/jobs")->status, 200);
  httplib::Client anonymous("127.0.0.1", port_);
  EXPECT_EQ(anonymous.Get("/v1/jobs")->status, 401);

  // Four submitters; the daemon is killed -9 while they run.
  std::mutex mu;
  std::set<std::string> acked;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c = Client();
      for (int i = 0; !stop; ++i) {
        std::string name = "j" + std::to_string(t) + "-" + std::to_string(i);
        auto r = c.Post("/v1/jobs", R"({"name": ")" + name + R"(", "tenant": "research/vision", "duration": "1h", "tasks": {"gpus": 1}})",
                        "application/json");
        if (!r) return;  // the daemon is gone
        if (r->status == 201) {
          std::lock_guard lock(mu);
          acked.insert(name);
        }
      }
    });
  }
  for (int i = 0; i < 400; ++i) {
    {
      std::lock_guard lock(mu);
      if (acked.size() >= 100) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Kill(SIGKILL);
  stop = true;
  for (auto& th : threads) th.join();
  ASSERT_GE(acked.size(), 100u);

  Launch(args);
  {
    std::ifstream log(dir_ / "allotd.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("restored the snapshot at event"), std::string::npos) << text;
  }
  httplib::Client c = Client();
  auto read_jobs = [&] {
    std::map<std::string, std::string> jobs;  // name → state
    int64_t after = -1;
    for (;;) {
      auto r = c.Get(("/v1/jobs?limit=1000" + (after >= 0 ? "&after=" + std::to_string(after) : "")).c_str());
      EXPECT_TRUE(r && r->status == 200);
      if (!r || r->status != 200) return jobs;
      Json page = Json::parse(r->body);
      for (const Json& j : page["jobs"]) {
        EXPECT_TRUE(jobs.emplace(j["name"], j["state"]).second) << "job listed twice: " << j["name"];
      }
      if (page["next_after"].is_null()) break;
      after = page["next_after"];
    }
    return jobs;
  };
  auto last_seq_now = [&] {
    uint64_t since = 0;
    for (;;) {
      auto r = c.Get(("/v1/events?since=" + std::to_string(since)).c_str());
      if (!r || r->status != 200) return since;
      Json page = Json::parse(r->body);
      if (page["last"].get<uint64_t>() == since) return since;
      since = page["last"];
    }
  };
  // The jobs as served and the journal position they reflect: a pass after the restart may
  // place what the crash left pending, so read again until no event landed during the read.
  std::map<std::string, std::string> served;
  uint64_t served_at = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    const uint64_t before = last_seq_now();
    served = read_jobs();
    served_at = last_seq_now();
    if (before == served_at) break;
  }
  for (const std::string& name : acked) EXPECT_TRUE(served.count(name)) << "acknowledged job lost: " << name;
  // A watcher that began before the crash goes on from where it was: the events come back
  // from the journal, a page at a time, with no gap.
  uint64_t seen = 0, pages = 0, last_seq = 0;
  for (uint64_t since = 0;; ++pages) {
    auto r = c.Get(("/v1/events?since=" + std::to_string(since)).c_str());
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    Json page = Json::parse(r->body);
    for (const Json& e : page["events"]) {
      EXPECT_GT(e["seq"].get<uint64_t>(), last_seq);
      last_seq = e["seq"];
      ++seen;
    }
    if (page["last"].get<uint64_t>() == since) break;
    since = page["last"];
  }
  EXPECT_EQ(seen, last_seq) << "the platform admin sees every event, each once";
  EXPECT_GE(seen, acked.size()) << "every submission at least";
  EXPECT_EQ(pages, (last_seq + 999) / 1000) << "pages of 1000";
  Kill(SIGTERM);

  // The journal replayed from scratch gives the same jobs in the same states.
  ASSERT_GT(served_at, 0u);
  auto journal = SqliteJournal::Open((dir_ / "journal.db").string());
  ASSERT_TRUE(journal.has_value()) << journal.error().message();
  ClusterState replayed;
  // Up to the position the served jobs reflected (events after it are a later pass's).
  ASSERT_TRUE((*journal)->Replay(0, [&](uint64_t seq, const Event& e) {
    return seq <= served_at ? replayed.apply(e) : Status::Ok();
  }).ok());
  std::map<std::string, std::string> from_journal;
  for (const Job& j : replayed.jobs()) from_journal[j.spec.name] = JobStateName(j.state);
  EXPECT_EQ(from_journal, served);
}

}  // namespace
}  // namespace allot

namespace allot {
namespace {

// Runs the `allot` CLI against the fixture's daemon; returns (exit code, stdout + stderr).
std::pair<int, std::string> Cli(const testing::ScratchDir& dir, const std::string& args) {
  std::string out = (dir / "cli.out").string();
  std::string cmd = "XDG_CONFIG_HOME=" + (dir / "xdg").string() + " " + ALLOT_BINARY + " " + args + " > " + out + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  return {WEXITSTATUS(rc), std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

TEST_F(AllotdTest, TheCliLogsInSubmitsListsExplainsCancelsAndShowsQuota) {
  Launch();
  std::string server = "--server http://127.0.0.1:" + std::to_string(port_);
  auto [rc, out] = Cli(dir_, "login " + server + " --token-file " + (dir_ / "admin-token").string());
  ASSERT_EQ(rc, 0) << out;
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "xdg/allot/config").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    std::ofstream job(dir_ / "job.yaml");
    job << "name: train\ntenant: research/nlp\nduration: 2h\ntasks: {count: 2, gpus: 8}\ntopology: rack\n";
  }
  std::tie(rc, out) = Cli(dir_, "submit -f " + (dir_ / "job.yaml").string());
  EXPECT_EQ(rc, 0) << out;
  // Acknowledged once durable; placed by the next pass (allotd runs one at most every 100 ms).
  EXPECT_TRUE(out == "job train running\n" || out == "job train pending\n") << out;
  for (int i = 0; i < 100 && Cli(dir_, "describe train").second.find("state: running") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::tie(rc, out) = Cli(dir_, "jobs");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("train  research/nlp  running  burstable  16"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "jobs -o json");
  EXPECT_EQ(Json::parse(out)["jobs"][0]["name"], "train");
  std::tie(rc, out) = Cli(dir_, "quota");
  EXPECT_NE(out.find("  research/nlp     gpu/H100-80GB  16"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "explain train -o yaml");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("topology: rack"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "usage --since 1h --tenant research");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("JOBS  GPU-HOURS"), std::string::npos) << out;
  EXPECT_NE(out.find("  research/nlp     1     H100-80GB "), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "usage --since soon");
  EXPECT_EQ(rc, 2) << out;
  std::tie(rc, out) = Cli(dir_, "usage --from 2026-13-01T00:00:00Z");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("from: '2026-13-01T00:00:00Z' is not a time"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "cancel train");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("state: cancelled"), std::string::npos) << out;
  // A command job's environment, as describe shows it.
  {
    std::ofstream job(dir_ / "env.yaml");
    job << "name: tune\ntenant: research/nlp\ncommand: [python, tune.py]\ntasks: {cpu: 1, memory: 4Gi}\n"
           "image: /srv/images/pytorch\nmounts:\n  - {volume: research:shared-models, path: /models}\n"
           "  - {volume: datasets, path: /data}\nenv: {HF_HOME: /data/hf}\nshm_size: 1Gi\n";
  }
  std::tie(rc, out) = Cli(dir_, "submit -f " + (dir_ / "env.yaml").string());
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(dir_, "describe tune");
  EXPECT_EQ(rc, 0) << out;
  // Instants as RFC 3339 and how long ago, never raw Unix seconds.
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\nsubmitted: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \((now|\d+s ago)\)\n)"))) << out;
  EXPECT_FALSE(std::regex_search(out, std::regex(R"(: 1\d{9}(\.\d+)?\n)"))) << out;
  EXPECT_NE(out.find("image: /srv/images/pytorch\nmounts:\n  research:shared-models \u2192 /models (ro)\n"
                     "  research/nlp:datasets \u2192 /data (rw)\nenv:\n  HF_HOME=/data/hf\nshm_size: 1Gi\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(Cli(dir_, "cancel tune").first, 0);
  // Refusals: the server's message and exit code 1; usage errors exit 2; no server exits 3.
  std::tie(rc, out) = Cli(dir_, "describe nope");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: job 'nope' does not exist\n");
  std::tie(rc, out) = Cli(dir_, "submit");
  EXPECT_EQ(rc, 2) << out;
  std::tie(rc, out) = Cli(dir_, "jobs --server http://127.0.0.1:1");
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("cannot reach allotd at http://127.0.0.1:1"), std::string::npos) << out;
  // A member token made by the CLI sees its own scope only.
  std::tie(rc, out) = Cli(dir_, "tokens create --principal mia --role member --scope research/vision");
  ASSERT_EQ(rc, 0) << out;
  std::string mia = out.substr(0, out.find('\n'));
  std::tie(rc, out) = Cli(dir_, "jobs --token " + mia);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out.find("train"), std::string::npos) << "research/nlp is outside mia's scope";
  std::tie(rc, out) = Cli(dir_, "nodes cordon h100-0 --token " + mia);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: only a platform-admin operates the fleet\n");
  // The admin lists mia's token and revokes it; it stops working.
  std::tie(rc, out) = Cli(dir_, "tokens list");
  EXPECT_EQ(rc, 0);
  size_t at = out.find("  mia  ");
  ASSERT_NE(at, std::string::npos) << out;
  std::string id = out.substr(out.rfind('\n', at) + 1, 16);
  std::tie(rc, out) = Cli(dir_, "tokens revoke " + id);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "revoked " + id + "\n");
  std::tie(rc, out) = Cli(dir_, "jobs --token " + mia);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: the bearer token is not known or was revoked\n");
  // The audit log, as the admin reads it: mia's refused cordon is there, and the revocation.
  std::tie(rc, out) = Cli(dir_, "audit list");
  EXPECT_EQ(rc, 0);
  bool refused_cordon = false;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    refused_cordon |= line.find("mia") != std::string::npos && line.find("node.cordon") != std::string::npos &&
                      line.find("permission_denied: only a platform-admin operates the fleet") != std::string::npos;
  }
  EXPECT_TRUE(refused_cordon) << out;
  EXPECT_NE(out.find("token.revoke"), std::string::npos) << out;
}

// Two tenants' jobs of one name: the short form works while the caller sees one of them, and
// --tenant says which when it sees both.
TEST_F(AllotdTest, TheCliNamesAJobsTenantOnlyWhenTheCallerSeesSeveralJobsOfThatName) {
  Launch();
  std::string server = "--server http://127.0.0.1:" + std::to_string(port_);
  auto [rc, out] = Cli(dir_, "login " + server + " --token-file " + (dir_ / "admin-token").string());
  ASSERT_EQ(rc, 0) << out;
  for (const char* tenant : {"research/nlp", "research/vision"}) {
    std::ofstream job(dir_ / "job.yaml");
    job << "name: train\ntenant: " << tenant << "\nduration: 2h\ntasks: {gpus: 1}\n";
    job.close();
    std::tie(rc, out) = Cli(dir_, "submit -f " + (dir_ / "job.yaml").string());
    ASSERT_EQ(rc, 0) << out;
  }
  std::tie(rc, out) = Cli(dir_, "describe train");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: job 'train' exists in 2 tenants (research/nlp, research/vision); expected ?tenant=PATH to say "
                 "which\n");
  std::tie(rc, out) = Cli(dir_, "describe train --tenant research/vision");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("tenant: research/vision\n"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "cancel train --tenant research/nlp");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("tenant: research/nlp\n"), std::string::npos) << out;
  EXPECT_NE(out.find("state: cancelled\n"), std::string::npos) << out;
  std::tie(rc, out) = Cli(dir_, "tokens create --principal vic --role member --scope research/vision");
  ASSERT_EQ(rc, 0) << out;
  std::string vic = out.substr(0, out.find('\n'));
  std::tie(rc, out) = Cli(dir_, "describe train --token " + vic);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("tenant: research/vision\n"), std::string::npos) << out;
}

// A name that would clear the reader's screen is refused, and neither the refusal nor the audit
// log that records it lets the ESC through to a terminal.
TEST_F(AllotdTest, TheCliShowsControlCharactersInWhatUsersWroteAsEscapes) {
  Launch();
  std::string server = "--server http://127.0.0.1:" + std::to_string(port_);
  auto [rc, out] = Cli(dir_, "login " + server + " --token-file " + (dir_ / "admin-token").string());
  ASSERT_EQ(rc, 0) << out;
  {
    std::ofstream job(dir_ / "evil.yaml");
    job << "name: \"\\e[2J\\e[31mhello\"\ntenant: research/nlp\nduration: 2h\ntasks: {gpus: 1}\n";
  }
  std::tie(rc, out) = Cli(dir_, "submit -f " + (dir_ / "evil.yaml").string());
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("job.name: '\\x1b[2J\\x1b[31mhello' does not start with a letter or digit"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  // A name from the command line comes back in the refusal and in the audit record's target.
  std::tie(rc, out) = Cli(dir_, "cancel \"$(printf '\\033[2Jgone')\"");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_EQ(out, "allot: job '\\x1b[2Jgone' does not exist\n");
  std::tie(rc, out) = Cli(dir_, "audit list");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\\x1b[2Jgone"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
}

TEST_F(AllotdTest, AConfigFileSeedsTenantsAndSchedulerAndFlagsOverrideIt) {
  {
    std::ofstream f(dir_ / "allot.yaml");
    f << "listen: 127.0.0.1:1\n"  // the flag wins
         "simulated_fleet: " << ALLOT_SOURCE_DIR << "/scenarios/example.yaml\n"
         "rate_limit: 0\n"
         "tenants:\n"
         "  - {path: alpha, max: {gpu/H100-80GB: 8}}\n"
         "  - {path: alpha/one}\n"
         "scheduler: {pass_interval: 5s}\n";
  }
  Launch({"--config", (dir_ / "allot.yaml").string()});
  auto r = Client().Get("/v1/tenants");
  ASSERT_TRUE(r && r->status == 200);
  Json tenants = Json::parse(r->body)["tenants"];
  ASSERT_EQ(tenants.size(), 2u) << tenants;
  EXPECT_EQ(tenants[1]["path"], "alpha/one");
  EXPECT_EQ(Json::parse(Client().Get("/v1/nodes")->body)["nodes"].size(), 5u) << "the example's fleet";
  std::ifstream log(dir_ / "allotd.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("serving http://127.0.0.1:" + std::to_string(port_)), std::string::npos) << text;
  Kill(SIGTERM);
  // A bad config stops allotd before it touches anything, naming the file, line and field.
  {
    std::ofstream f(dir_ / "bad.yaml");
    f << "listen: 127.0.0.1:7070\nsnapshot_evry: 10\n";
  }
  std::string cmd = std::string(ALLOTD_BINARY) + " --config " + (dir_ / "bad.yaml").string() + " 2>" + (dir_ / "bad.log").string();
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
  std::ifstream bad(dir_ / "bad.log");
  std::string why((std::istreambuf_iterator<char>(bad)), std::istreambuf_iterator<char>());
  EXPECT_NE(why.find("bad.yaml:2: snapshot_evry: unknown field"), std::string::npos) << why;
}

TEST_F(AllotdTest, OnPostgresqlAcknowledgedJobsSurviveKillNineAndASecondWriterIsRefused) {
  auto pg = testing::PrivatePostgres::Start();
  ASSERT_TRUE(pg.has_value()) << pg.error().message();
  ASSERT_TRUE((*pg)->Exec("postgres", "CREATE DATABASE allot").ok());
  std::string example = std::string(ALLOT_SOURCE_DIR) + "/scenarios/example.yaml";
  std::vector<std::string> args = {"--store", (*pg)->Conninfo("allot"), "--tenants", example, "--simulated-fleet", example,
                                   "--snapshot-every", "20"};
  Launch(args);
  for (int i = 0; i < 20; ++i) {
    httplib::Client c = Client();
    std::string body = R"({"name": "pg-)" + std::to_string(i) + R"(", "tenant": "research/vision", "duration": "1h", "tasks": {"gpus": 1}})";
    ASSERT_EQ(c.Post("/v1/jobs", body, "application/json")->status, 201);
  }
  // A second allotd on the same database (a standby started too early) refuses to write.
  std::string cmd = std::string(ALLOTD_BINARY) + " --listen 127.0.0.1:" + std::to_string(port_ + 1) + " --data " +
                    (dir_ / "standby").string() + " --store '" + (*pg)->Conninfo("allot") + "' 2>" + (dir_ / "standby.log").string();
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
  std::ifstream standby(dir_ / "standby.log");
  std::string why((std::istreambuf_iterator<char>(standby)), std::istreambuf_iterator<char>());
  EXPECT_NE(why.find("another allotd holds the journal lock"), std::string::npos) << why;
  // kill -9: the lock goes with the session; a restart replays from PostgreSQL.
  Kill(SIGKILL);
  Launch(args);
  auto r = Client().Get("/v1/jobs?limit=1000");
  ASSERT_TRUE(r && r->status == 200);
  std::set<std::string> names;
  Json listed = Json::parse(r->body);
  for (const Json& j : listed["jobs"]) names.insert(j["name"]);
  std::ifstream log(dir_ / "allotd.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(names.size(), 20u) << text;
  EXPECT_TRUE(names.count("pg-19"));
  EXPECT_NE(text.find("state restored from postgresql"), std::string::npos) << text;
  EXPECT_NE(text.find("restored the snapshot at event"), std::string::npos) << "a snapshot in PostgreSQL, then the tail: " << text;
}

TEST_F(AllotdTest, TheCliAppliesMovesAndDeletesTenants) {
  Launch();
  std::string as_admin;  // logged in below
  ASSERT_EQ(Cli(dir_, "login --server http://127.0.0.1:" + std::to_string(port_) + " --token-file " + (dir_ / "admin-token").string()).first, 0);
  {
    std::ofstream f(dir_ / "tenants.yaml");
    f << "tenants:\n"
         "  - {path: research/speech, guarantee: {gpu/H100-80GB: 2}, max: {gpu/H100-80GB: 8}}\n"
         "  - {path: research/speech/asr}\n";
  }
  auto [rc, out] = Cli(dir_, "tenants apply -f " + (dir_ / "tenants.yaml").string() + as_admin);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "tenant research/speech created\ntenant research/speech/asr created\n");
  std::tie(rc, out) = Cli(dir_, "tenants apply -f " + (dir_ / "tenants.yaml").string() + as_admin);
  EXPECT_EQ(out, "tenant research/speech updated\ntenant research/speech/asr updated\n");
  std::tie(rc, out) = Cli(dir_, "tenants move research/speech --to research/audio" + as_admin);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "tenant research/speech moved to research/audio\n");
  std::tie(rc, out) = Cli(dir_, "quota" + as_admin);
  EXPECT_NE(out.find("    research/audio/asr"), std::string::npos) << out;
  EXPECT_EQ(out.find("speech"), std::string::npos) << out;
  // Refusals name the reason and exit 1; a missing argument exits 2.
  std::tie(rc, out) = Cli(dir_, "tenants delete research/audio" + as_admin);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: tenant 'research/audio' has 1 child tenant(s), e.g. 'research/audio/asr': delete or move them first\n");
  std::tie(rc, out) = Cli(dir_, "tenants move research/audio" + as_admin);
  EXPECT_EQ(rc, 2) << out;
  std::tie(rc, out) = Cli(dir_, "tenants delete research/audio/asr" + as_admin);
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(dir_, "tenants delete research/audio" + as_admin);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "tenant research/audio deleted\n");
  std::tie(rc, out) = Cli(dir_, "tenants delete research/audio" + as_admin);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "allot: tenant 'research/audio' does not exist\n");
}

}  // namespace
}  // namespace allot
