// One openb experiment, step for step as FGD.md §2–3 describes: typical pods, seeded shuffle,
// tune to `inflate` × capacity, random node ranks for ties, one pass over the pods, the curve.
#include <algorithm>
#include <cmath>
#include <array>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/rng.h"
#include "core/strings.h"
#include "placement/score/scorer.h"
#include "sim/openb.h"

namespace allot {
namespace {

struct Pod {
  PodShape shape;
  uint32_t cls = 0;  // index of its class (for the score cache)
};

// Pod class key (FGD.md §6.1): (cpu, milli, gpus, spec string).
using ClassKey = std::tuple<int64_t, int32_t, int, std::string>;

ClassKey KeyOf(const OpenbPod& p) {
  if (p.num_gpu == 0) return {p.cpu, 0, 0, ""};
  return {p.cpu, p.gpu_milli, p.num_gpu, p.gpu_spec};
}

// Allowed models as bits of the node list's model table; a spec naming only unknown models
// matches nothing (bit 63).
uint64_t ModelMask(const std::string& spec, const std::map<std::string, int>& models) {
  uint64_t mask = 0;
  bool named = false;  // a spec of only empty names ("|") means any model, as in the reference
  for (const std::string& name : Split(spec, '|')) {
    if (name.empty()) continue;
    named = true;
    auto it = models.find(name);
    if (it != models.end()) mask |= uint64_t{1} << it->second;
  }
  return named ? mask | uint64_t{1} << 63 : 0;
}

PodShape ShapeOf(const OpenbPod& p, const std::map<std::string, int>& models) {
  PodShape s;
  s.cpu = p.cpu;
  s.memory = p.memory;
  if (p.num_gpu > 0) {
    s.gpus = p.num_gpu;
    s.milli = std::clamp<int32_t>(p.gpu_milli, 0, kWholeGpuMilli);
    s.models = ModelMask(p.gpu_spec, models);
  }
  return s;
}

double Round2(double x) { return std::nearbyint(x * 100) / 100; }  // to 0.01, half to even

}  // namespace

Result<OpenbResult> RunOpenb(const std::vector<OpenbNode>& node_rows, const std::vector<OpenbPod>& pod_rows,
                             const OpenbOptions& opt) {
  if (node_rows.empty()) return Err(InvalidArgument("openb: the node list is empty"));
  if (!(opt.inflate > 0 && opt.inflate <= 10)) {
    return Err(InvalidArgument("openb: --inflate " + std::to_string(opt.inflate) + "; expected above 0, at most 10"));
  }
  // Nodes sorted by name; models indexed by first appearance in that order.
  std::vector<const OpenbNode*> sorted_nodes;
  for (const OpenbNode& n : node_rows) sorted_nodes.push_back(&n);
  std::sort(sorted_nodes.begin(), sorted_nodes.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::map<std::string, int> models;
  std::vector<ShareNode> nodes;
  int64_t total_gpus = 0;
  for (const OpenbNode* r : sorted_nodes) {
    ShareNode n;
    if (r->gpus > 0) {
      auto [it, fresh] = models.emplace(r->model, static_cast<int>(models.size()));
      if (it->second >= 63) return Err(InvalidArgument("openb: more than 63 GPU models"));
      n.model = static_cast<uint8_t>(it->second);
    }
    n.gpus = r->gpus;
    n.cpu_left = r->cpu;
    n.memory_left = r->memory;
    for (int i = 0; i < n.gpus; ++i) n.free[i] = kWholeGpuMilli;
    total_gpus += r->gpus;
    nodes.push_back(n);
  }
  if (total_gpus == 0) return Err(InvalidArgument("openb: the node list has no GPUs"));

  // 1. W: the pods sorted by name; classes and typical pods from W (FGD.md §6.1).
  std::vector<const OpenbPod*> w;
  for (const OpenbPod& p : pod_rows) w.push_back(&p);
  std::stable_sort(w.begin(), w.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::map<ClassKey, int64_t> counts;
  for (const OpenbPod* p : w) counts[KeyOf(*p)] += 1;
  std::map<ClassKey, uint32_t> class_index;
  for (const auto& [k, c] : counts) class_index.emplace(k, static_cast<uint32_t>(class_index.size()));
  std::vector<std::pair<ClassKey, int64_t>> ranked(counts.begin(), counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first > b.first;  // ties: larger key first
  });
  WorkloadModel model;
  Workload& typical = model.typical;
  int64_t total = static_cast<int64_t>(w.size()), kept = 0;
  std::vector<std::pair<ClassKey, int64_t>> keep;
  for (const auto& rc : ranked) {
    if (kept * 100 >= total * 95) break;
    keep.push_back(rc);
    kept += rc.second;
  }
  for (const auto& [k, c] : keep) {
    OpenbPod p{"", std::get<0>(k), 0, std::get<2>(k), std::get<1>(k), std::get<3>(k)};
    // As the reference computes it: (count/total) / (kept/total).
    double t = static_cast<double>(total);
    typical.push_back({ShapeOf(p, models), (static_cast<double>(c) / t) / (static_cast<double>(kept) / t)});
  }
  for (const auto& [k, c] : ranked) {
    OpenbPod p{"", std::get<0>(k), 0, std::get<2>(k), std::get<1>(k), std::get<3>(k)};
    model.all.push_back({ShapeOf(p, models), static_cast<double>(c) / static_cast<double>(total)});
  }
  auto scorer = MakeScorer(opt.policy, model);
  if (!scorer) {
    std::string names;
    for (const ScorerEntry& e : Scorers()) names += (names.empty() ? "" : ", ") + std::string(e.name);
    return Err(InvalidArgument("openb: --policy '" + opt.policy + "' is not registered; expected one of " + names));
  }
  auto pod_of = [&](const OpenbPod& p) { return Pod{ShapeOf(p, models), class_index.at(KeyOf(p))}; };

  // 2. Seeded: one draw discarded, the pods (by name) shuffled.
  Rng rng(opt.seed);
  rng.Next();
  std::vector<Pod> pods;
  for (const OpenbPod* p : w) pods.push_back(pod_of(*p));
  for (size_t i = pods.size(); i > 1; --i) std::swap(pods[i - 1], pods[rng.Below(i)]);

  // 3. Tune to the target demand (FGD.md §2.5, quirk included: the stop test adds the per-GPU
  //    share, not the pod's total).
  const int64_t target = static_cast<int64_t>(std::llround(opt.inflate * static_cast<double>(total_gpus) * 1000));
  int64_t demand = 0;
  for (const Pod& p : pods) demand += p.shape.total_milli();
  if (demand < target && !w.empty()) {
    while (true) {
      const OpenbPod& d = *w[rng.Below(w.size())];
      Pod p = pod_of(d);
      if (demand + p.shape.milli > target) break;
      demand += p.shape.total_milli();
      pods.push_back(p);
    }
  } else {
    while (demand > target && !pods.empty()) {
      size_t i = rng.Below(pods.size());
      demand -= pods[i].shape.total_milli();
      pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  // 4. Node ranks: a random permutation; score ties go to the lowest rank.
  std::vector<uint32_t> rank(nodes.size());
  for (uint32_t i = 0; i < rank.size(); ++i) rank[i] = i;
  for (size_t i = rank.size(); i > 1; --i) std::swap(rank[i - 1], rank[rng.Below(i)]);

  // 5. One pass over the pods. Nodes in the same state (model, CPU and memory left, the
  //    multiset of free GPU shares, the kinds of pod they hold) are interchangeable but for their
  //    rank, so the pass walks the distinct live states, not the nodes: each is filtered once,
  //    scored once per pod class (memoised), and offers its lowest-ranked node.
  constexpr int64_t kUnset = INT64_MIN;
  const size_t nclasses = class_index.size();
  struct State {
    ShareNode node;                                  // a representative
    int32_t max_free = 0;
    int32_t fully_free = 0;
    std::set<std::pair<uint32_t, uint32_t>> members;  // (rank, node)
    std::vector<int64_t> scores;                     // per pod class, memoised
    int32_t live_pos = -1;                           // index in `live`, or -1
  };
  std::vector<State> states;
  std::unordered_map<std::string, uint32_t> state_ids;
  std::vector<uint32_t> live;
  auto intern = [&](const ShareNode& n) {
    std::array<int32_t, kMaxShareGpus> sorted = n.free;
    std::sort(sorted.begin(), sorted.begin() + n.gpus);
    std::string key;
    key.append(reinterpret_cast<const char*>(&n.model), sizeof n.model);
    key.append(reinterpret_cast<const char*>(&n.cpu_left), sizeof n.cpu_left);
    key.append(reinterpret_cast<const char*>(&n.memory_left), sizeof n.memory_left);
    key.append(reinterpret_cast<const char*>(&n.tags), sizeof n.tags);
    key.append(reinterpret_cast<const char*>(sorted.data()), sizeof(int32_t) * n.gpus);
    auto [it, fresh] = state_ids.emplace(std::move(key), static_cast<uint32_t>(states.size()));
    if (fresh) {
      State st;
      st.node = n;
      st.fully_free = n.FullyFree();
      for (int i = 0; i < n.gpus; ++i) st.max_free = std::max(st.max_free, n.free[i]);
      states.push_back(std::move(st));
    }
    return it->second;
  };
  std::vector<uint32_t> state_of(nodes.size());
  auto join = [&](uint32_t node) {
    uint32_t sid = intern(nodes[node]);
    state_of[node] = sid;
    State& st = states[sid];
    st.members.insert({rank[node], node});
    if (st.live_pos < 0) {
      st.live_pos = static_cast<int32_t>(live.size());
      live.push_back(sid);
    }
  };
  auto leave = [&](uint32_t node) {
    State& st = states[state_of[node]];
    st.members.erase({rank[node], node});
    if (st.members.empty()) {
      uint32_t moved = live.back();
      live[st.live_pos] = moved;
      states[moved].live_pos = st.live_pos;
      live.pop_back();
      st.live_pos = -1;
    }
  };
  for (uint32_t i = 0; i < nodes.size(); ++i) join(i);
  auto fits = [](const State& st, const PodShape& p) {
    if (p.cpu > st.node.cpu_left || p.memory > st.node.memory_left) return false;
    if (!p.wants_gpu()) return true;
    if (p.gpus == 1) return st.max_free >= p.milli && (p.models == 0 || (p.models >> st.node.model & 1));
    if (p.milli == kWholeGpuMilli && st.fully_free < p.gpus) return false;
    return Fits(st.node, p);
  };

  std::vector<std::pair<int32_t, double>> events;  // (arrived %, allocated %)
  events.reserve(pods.size());
  const double g = static_cast<double>(total_gpus);
  int64_t arrived = 0, allocated = 0, placed = 0;
  std::vector<uint32_t> feasible;  // states
  for (const Pod& pod : pods) {
    const PodShape& p = pod.shape;
    arrived += p.total_milli();
    feasible.clear();
    size_t feasible_nodes = 0;
    for (uint32_t sid : live) {
      if (!fits(states[sid], p)) continue;
      feasible.push_back(sid);
      feasible_nodes += states[sid].members.size();
    }
    if (feasible_nodes > 0) {
      uint32_t best = UINT32_MAX;  // node
      if (feasible_nodes == 1) {
        best = states[feasible[0]].members.begin()->second;
      } else if (scorer->uniform_node()) {
        // Uniform over the feasible nodes, walked in (live state, rank) order.
        uint64_t k = rng.Below(feasible_nodes);
        for (uint32_t sid : feasible) {
          const auto& m = states[sid].members;
          if (k < m.size()) {
            best = std::next(m.begin(), static_cast<std::ptrdiff_t>(k))->second;
            break;
          }
          k -= m.size();
        }
      } else {
        int64_t best_score = kUnset;
        uint32_t best_rank = UINT32_MAX;
        for (uint32_t sid : feasible) {
          State& st = states[sid];
          if (st.scores.empty()) st.scores.assign(nclasses, kUnset);
          int64_t& sc = st.scores[pod.cls];
          if (sc == kUnset) sc = scorer->Score(st.node, p);
          uint32_t r = st.members.begin()->first;
          if (sc > best_score || (sc == best_score && r < best_rank)) {
            best_score = sc;
            best_rank = r;
            best = st.members.begin()->second;
          }
        }
      }
      uint64_t gpus = scorer->ChooseGpus(nodes[best], p, rng);
      leave(best);
      Reserve(nodes[best], p, gpus);
      join(best);
      allocated += p.total_milli();
      ++placed;
    }
    events.push_back({static_cast<int32_t>(std::nearbyint(static_cast<double>(arrived) / g / 10)),
                      Round2(static_cast<double>(allocated) / g / 10)});
  }

  // 6. The curve: mean allocation per arrived-demand percent (neighbours when none).
  int xmax = static_cast<int>(std::lround(opt.inflate * 100));
  std::vector<double> sum(xmax + 2, 0);
  std::vector<int64_t> n(xmax + 2, 0);
  for (const auto& [x, a] : events) {
    if (x >= 0 && x <= xmax + 1) {
      sum[x] += a;
      n[x] += 1;
    }
  }
  OpenbResult r;
  r.policy = opt.policy;
  r.seed = opt.seed;
  r.total_gpus = total_gpus;
  r.pods = static_cast<int64_t>(pods.size());
  r.placed = placed;
  for (int x = 0; x <= xmax; ++x) {
    double s = sum[x];
    int64_t c = n[x];
    if (c == 0) {
      for (int y = std::max(0, x - 1); y <= x + 1; ++y) {
        s += sum[y];
        c += n[y];
      }
    }
    r.curve.push_back(c == 0 ? 0 : Round2(s / static_cast<double>(c)));
  }
  return r;
}

}  // namespace allot
