// A private PostgreSQL server for tests, as in RECIPES.md: initdb into a fresh directory, the
// server on a free loopback port with its socket in that directory, stopped and removed when
// the object goes. The server refuses to run as root, so under root it runs as `postgres`.
//
// Missing binaries are a failure, never a skip: a journal backend that is not tested is not
// known to work. scripts/install-deps installs them (package postgresql).
//
//   auto pg = testing::PrivatePostgres::Start();   // ~1 s: initdb, then pg_ctl start
//   ASSERT_TRUE(pg) << pg.error().message();
//   auto j = PgJournal::Open((*pg)->Conninfo("postgres"));
#pragma once

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/status.h"

namespace allot::testing {

class PrivatePostgres {
 public:
  static constexpr const char* kBin = "/usr/lib/postgresql/15/bin";

  static Result<std::unique_ptr<PrivatePostgres>> Start() {
    for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
      std::string path = std::string(kBin) + "/" + tool;
      if (::access(path.c_str(), X_OK) != 0) {
        return Err(FailedPrecondition("PostgreSQL for tests: " + path +
                                      " is missing; expected the Debian package postgresql (run scripts/install-deps)"));
      }
    }
    std::unique_ptr<PrivatePostgres> pg(new PrivatePostgres());
    // Under /tmp, not gtest's temp dir: the socket path must stay under 107 bytes.
    char dir[] = "/tmp/allot-pg.XXXXXX";
    if (!::mkdtemp(dir)) return Err(Unavailable(std::string("PostgreSQL for tests: mkdtemp failed in /tmp")));
    pg->dir_ = dir;
    if (::geteuid() == 0) {
      const passwd* pw = ::getpwnam("postgres");
      if (!pw) return Err(FailedPrecondition("PostgreSQL for tests: running as root needs the user postgres; none exists"));
      if (::chown(dir, pw->pw_uid, pw->pw_gid) != 0) return Err(Unavailable("PostgreSQL for tests: cannot chown " + pg->dir_));
      pg->as_ = "runuser -u postgres -- ";
    }
    if (Status s = pg->Run("initdb", "-D " + pg->dir_ + "/data -A trust -U postgres -E UTF8 --no-sync"); !s.ok()) {
      return Err(s);
    }
    // A port that was free a moment ago may be taken by the time the server binds it (parallel
    // ctest): try a few.
    Status started = Status::Ok();
    for (int attempt = 0; attempt < 5; ++attempt) {
      pg->port_ = FreePort();
      started = pg->StartServer();
      if (started.ok()) return pg;
    }
    return Err(started);
  }

  ~PrivatePostgres() {
    if (running_) Run("pg_ctl", "-D " + dir_ + "/data -m immediate -w stop");
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  PrivatePostgres(const PrivatePostgres&) = delete;
  PrivatePostgres& operator=(const PrivatePostgres&) = delete;

  int port() const { return port_; }

  // A libpq key=value conninfo for `dbname` on this server, over TCP as allotd would connect.
  std::string Conninfo(const std::string& dbname) const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + dbname;
  }

  // Runs `sql` on `dbname`: creating a database per test, damaging what a journal wrote.
  Status Exec(const std::string& dbname, const std::string& sql) const {
    PGconn* c = PQconnectdb(Conninfo(dbname).c_str());
    Status out = Status::Ok();
    if (PQstatus(c) != CONNECTION_OK) {
      out = Unavailable("PostgreSQL for tests: connecting to " + dbname + ": " + PQerrorMessage(c));
    } else {
      PGresult* r = PQexec(c, sql.c_str());
      if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        out = Internal("PostgreSQL for tests: " + sql + ": " + PQresultErrorMessage(r));
      }
      PQclear(r);
    }
    PQfinish(c);
    return out;
  }

  // An outage as a client sees it: Stop, then StartServer on the same port and data.
  Status Stop() {
    running_ = false;
    return Run("pg_ctl", "-D " + dir_ + "/data -m fast -w stop");
  }
  Status StartServer() {
    Status s = Run("pg_ctl", "-D " + dir_ + "/data -l " + dir_ + "/log -w -t 30 start -o \"-k " + dir_ + " -p " +
                                 std::to_string(port_) + " -c listen_addresses=127.0.0.1\"");
    running_ = s.ok();
    return s;
  }

 private:
  PrivatePostgres() = default;

  static int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    if (fd >= 0) ::close(fd);
    return port;
  }

  // Runs one of the server's tools (as postgres under root); a failure quotes its output and
  // the server log, which say why.
  Status Run(const std::string& tool, const std::string& args) const {
    std::string out = dir_ + "/" + tool + ".out";
    std::string cmd = as_ + kBin + "/" + tool + " " + args + " >" + out + " 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc == 0) return Status::Ok();
    auto slurp = [](const std::string& path) {
      std::ifstream in(path);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    };
    return Unavailable("PostgreSQL for tests: '" + cmd + "' exited with " + std::to_string(rc) + ":\n" + slurp(out) +
                       "\nserver log:\n" + slurp(dir_ + "/log"));
  }

  std::string dir_;
  std::string as_;  // "runuser -u postgres -- " under root
  int port_ = 0;
  bool running_ = false;
};

// One server per test suite (started in SetUpTestSuite, ~1 s), a fresh database per test:
//
//   static void SetUpTestSuite() { SuitePostgres::Start(); }
//   static void TearDownTestSuite() { SuitePostgres::Stop(); }
//   void SetUp() override { ASSERT_TRUE(SuitePostgres::Ready().ok()) << SuitePostgres::Ready().message(); }
class SuitePostgres {
 public:
  static void Start() {
    auto pg = PrivatePostgres::Start();
    if (pg) {
      server_ = std::move(*pg);
    } else {
      error_ = pg.error().message();
    }
  }
  static void Stop() { server_.reset(); }
  static Status Ready() { return server_ ? Status::Ok() : Unavailable(error_); }
  static PrivatePostgres& server() { return *server_; }
  // Creates a database named `prefix` plus a number unique in this process; returns its name.
  static Result<std::string> NewDatabase(const std::string& prefix) {
    std::string db = prefix + std::to_string(++databases_);
    if (Status s = server_->Exec("postgres", "CREATE DATABASE " + db); !s.ok()) return Err(s);
    return db;
  }

 private:
  static inline std::unique_ptr<PrivatePostgres> server_;
  static inline std::string error_;
  static inline int databases_ = 0;
};

}  // namespace allot::testing
