#include "fleet/mig.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace allot {
namespace {

constexpr int kAll7[] = {0, 1, 2, 3, 4, 5, 6};
constexpr int kEven[] = {0, 2, 4, 6};
constexpr int kTwo[] = {0, 2, 4};
constexpr int kThree[] = {0, 4};
constexpr int kZero[] = {0};
constexpr int kA30One[] = {0, 1, 2, 3};
constexpr int kA30Two[] = {0, 2};

constexpr int64_t kGi = 1024;

// The 7-compute / 8-memory-slice family; memory per profile in GiB as the names say.
#define ALLOT_MIG_7(one, one2x, two, three, four, seven)                                  \
  {                                                                                       \
    {"1g." #one "gb", 1, 1, 7, kAll7, one * kGi, false},                                  \
        {"1g." #one "gb+me", 1, 1, 1, kAll7, one * kGi, true},                            \
        {"1g." #one2x "gb", 1, 2, 4, kEven, one2x * kGi, false},                          \
        {"2g." #two "gb", 2, 2, 3, kTwo, two * kGi, false},                               \
        {"3g." #three "gb", 3, 4, 2, kThree, three * kGi, false},                         \
        {"4g." #four "gb", 4, 4, 1, kZero, four * kGi, false},                            \
        {"7g." #seven "gb", 7, 8, 1, kZero, seven * kGi, false},                          \
  }

constexpr MigProfile kA100_40[] = ALLOT_MIG_7(5, 10, 10, 20, 20, 40);
constexpr MigProfile kA100_80[] = ALLOT_MIG_7(10, 20, 20, 40, 40, 80);
constexpr MigProfile kH100_80[] = ALLOT_MIG_7(10, 20, 20, 40, 40, 80);
constexpr MigProfile kH100_94[] = ALLOT_MIG_7(12, 24, 24, 47, 47, 94);
constexpr MigProfile kH200[] = ALLOT_MIG_7(18, 35, 35, 71, 71, 141);
constexpr MigProfile kB200[] = ALLOT_MIG_7(23, 45, 45, 90, 90, 180);
#undef ALLOT_MIG_7

constexpr MigProfile kA30[] = {
    {"1g.6gb", 1, 1, 4, kA30One, 6 * kGi, false},
    {"1g.6gb+me", 1, 1, 1, kA30One, 6 * kGi, true},
    {"2g.12gb", 2, 2, 2, kA30Two, 12 * kGi, false},
    {"4g.24gb", 4, 4, 1, kZero, 24 * kGi, false},
};

constexpr MigGeometry kGeometries[] = {
    {"A100-40GB", 7, 8, kA100_40}, {"A100-80GB", 7, 8, kA100_80}, {"H100-80GB", 7, 8, kH100_80},
    {"H100-94GB", 7, 8, kH100_94}, {"H200-141GB", 7, 8, kH200},   {"B200", 7, 8, kB200},
    {"A30-24GB", 4, 4, kA30},
};

uint32_t Interval(int start, int size) { return ((1u << size) - 1) << start; }

}  // namespace

int MigGeometry::Find(std::string_view name) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const MigGeometry* FindMigGeometry(std::string_view model) {
  for (const MigGeometry& g : kGeometries) {
    if (g.model == model) return &g;
  }
  return nullptr;
}

uint32_t MigMemoryMask(const MigGeometry& g, const MigLayout& layout) {
  uint32_t mask = 0;
  for (const MigInstance& i : layout) mask |= Interval(i.start, g.profiles[i.profile].memory_slices);
  return mask;
}

bool CanCreateMig(const MigGeometry& g, const MigLayout& layout, int profile, int start) {
  if (profile < 0 || profile >= static_cast<int>(g.profiles.size())) return false;
  const MigProfile& p = g.profiles[profile];
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) return false;
  if (start + p.memory_slices > g.memory_slices) return false;
  if (MigMemoryMask(g, layout) & Interval(start, p.memory_slices)) return false;
  int compute = p.compute_slices, same = 1, media = p.media_extensions;
  for (const MigInstance& i : layout) {
    const MigProfile& q = g.profiles[i.profile];
    compute += q.compute_slices;
    same += i.profile == profile;
    media += q.media_extensions;
  }
  return compute <= g.compute_slices && same <= p.max_count && media <= 1;
}

std::vector<int> FreeMigStarts(const MigGeometry& g, const MigLayout& layout, int profile) {
  std::vector<int> out;
  if (profile < 0 || profile >= static_cast<int>(g.profiles.size())) return out;
  for (int s : g.profiles[profile].starts) {
    if (CanCreateMig(g, layout, profile, s)) out.push_back(s);
  }
  return out;
}

int OpenMigChoices(const MigGeometry& g, const MigLayout& layout) {
  int n = 0;
  for (size_t p = 0; p < g.profiles.size(); ++p) {
    if (g.profiles[p].media_extensions) continue;
    for (int s : g.profiles[p].starts) n += CanCreateMig(g, layout, static_cast<int>(p), s);
  }
  return n;
}

Status ValidateMigLayout(const MigGeometry& g, const MigLayout& layout) {
  MigLayout built;
  for (size_t k = 0; k < layout.size(); ++k) {
    const MigInstance& i = layout[k];
    if (i.profile >= g.profiles.size()) {
      return InvalidArgument("MIG instance " + std::to_string(k) + ": unknown profile index");
    }
    if (!CanCreateMig(g, built, i.profile, i.start)) {
      return InvalidArgument("MIG instance " + std::to_string(k) + " (" + std::string(g.profiles[i.profile].name) +
                             " at slice " + std::to_string(i.start) + ") does not fit on " + std::string(g.model) +
                             " beside the instances before it");
    }
    built.push_back(i);
  }
  return Status::Ok();
}

namespace {

bool PlaceAll(const MigGeometry& g, const std::vector<int>& order, size_t k, MigLayout& layout) {
  if (k == order.size()) return true;
  for (int s : FreeMigStarts(g, layout, order[k])) {
    layout.push_back({static_cast<uint8_t>(order[k]), static_cast<uint8_t>(s)});
    if (PlaceAll(g, order, k + 1, layout)) return true;
    layout.pop_back();
  }
  return false;
}

}  // namespace

Result<MigLayout> LayoutFromNames(const MigGeometry& g, const std::vector<std::string>& names) {
  std::vector<int> profiles;
  for (const std::string& n : names) {
    int p = g.Find(n);
    if (p < 0) {
      std::string known;
      for (const MigProfile& q : g.profiles) known += (known.empty() ? "" : ", ") + std::string(q.name);
      return Err(InvalidArgument("MIG profile '" + n + "' does not exist on " + std::string(g.model) +
                                 "; expected one of " + known));
    }
    profiles.push_back(p);
  }
  std::vector<int> order(profiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return g.profiles[profiles[a]].memory_slices > g.profiles[profiles[b]].memory_slices;
  });
  std::vector<int> by_size;
  for (int i : order) by_size.push_back(profiles[i]);
  MigLayout layout;
  if (!PlaceAll(g, by_size, 0, layout)) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return Err(InvalidArgument("MIG layout [" + list + "] does not fit one " + std::string(g.model) +
                               " (memory slices, compute slices or per-profile counts)"));
  }
  return layout;
}

}  // namespace allot
