// A load generator for allotd: C connections (threads, keep-alive) each POST /v1/jobs in turn
// until N jobs are submitted; prints durable submissions per second and latency percentiles.
//
//   allotd_load --server http://127.0.0.1:7070 --token-file DATA/admin-token --tenant T
//               [--connections 16] [--requests 20000] [--gpus 1]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  std::string server = "http://127.0.0.1:7070", token_file, tenant, gpus = "1";
  int connections = 16, requests = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--server") server = v;
    else if (k == "--token-file") token_file = v;
    else if (k == "--tenant") tenant = v;
    else if (k == "--connections") connections = std::stoi(v);
    else if (k == "--requests") requests = std::stoi(v);
    else if (k == "--gpus") gpus = v;
    else {
      std::cerr << "allotd_load: unknown option " << k << "\n";
      return 2;
    }
  }
  std::string token;
  std::ifstream(token_file) >> token;
  if (token.empty() || tenant.empty()) {
    std::cerr << "allotd_load: --token-file and --tenant are required\n";
    return 2;
  }
  std::atomic<int> next{0}, failed{0};
  std::vector<std::vector<double>> lat(connections);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http(server);
      http.set_bearer_token_auth(token.c_str());
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);  // headers and body go out in two writes: no Nagle wait
      for (int i; (i = next++) < requests;) {
        std::string body = R"({"name": "load-)" + std::to_string(i) + R"(", "tenant": ")" + tenant +
                           R"(", "duration": "1h", "tasks": {"gpus": )" + gpus + "}}";
        auto s = std::chrono::steady_clock::now();
        auto r = http.Post("/v1/jobs", body, "application/json");
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
        if (!r || r->status != 201) {
          if (failed++ < 3) {
            std::fprintf(stderr, "allotd_load: %s\n", r ? (std::to_string(r->status) + " " + r->body).c_str()
                                                          : ("no reply: " + httplib::to_string(r.error())).c_str());
          }
        }
        lat[c].push_back(ms);
      }
    });
  }
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p / 100 * all.size()))]; };
  std::printf("%d submissions over %d connections in %.2f s: %.0f/s; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d failed\n",
              requests, connections, secs, requests / secs, pct(50), pct(99), all.empty() ? 0 : all.back(), failed.load());
  return failed > 0 ? 1 : 0;
}
