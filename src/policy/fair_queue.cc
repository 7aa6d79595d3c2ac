#include "policy/fair_queue.h"

#include <algorithm>

namespace allot {
namespace {

// Heap order: the run with the earliest head on top.
bool LaterHead(const auto& a, const auto& b) { return *b.cur < *a.cur; }

}  // namespace

FairQueue::FairQueue(const UsageOverlay& usage, const Resources& capacity, int resource_count)
    : usage_(usage), capacity_(capacity), resource_count_(resource_count), entries_(usage.tree().size()) {}

void FairQueue::Clear() {
  for (TenantId t : touched_) entries_[t.value()] = Entry{};
  touched_.clear();
  active_.clear();
  heaps_.clear();
  singles_.clear();
  path_.clear();
  path_valid_ = false;
  prepared_ = false;
  silent_batches_ = 0;
  runs_at_look_ = 0;
}

void FairQueue::Push(const Job& job) {
  const QueuedJob& q = singles_.emplace_back(QueuedJob{job.queued_ms, job.id.value()});
  PushRun(job.spec.tenant, &q, &q + 1, UINT32_MAX);
}

void FairQueue::PushRun(TenantId tenant, const QueuedJob* first, const QueuedJob* last, uint32_t tag) {
  ALLOT_CHECK(!prepared_);
  if (first == last) return;
  entries_[tenant.value()].own.push_back({first, last, tag});
  int64_t n = last - first;
  for (TenantId a = tenant; a.valid(); a = usage_.tree().tenant(a).parent) {
    Entry& e = entries_[a.value()];
    if (e.count == 0) touched_.push_back(a);
    e.count += n;
  }
}

bool FairQueue::empty() const { return entries_[0].count == 0; }

void FairQueue::Prepare() {
  prepared_ = true;
  for (TenantId t : touched_) {
    auto& own = entries_[t.value()].own;
    std::make_heap(own.begin(), own.end(), LaterHead<Run, Run>);
  }
  // Children before parents: deeper tenants first.
  std::sort(touched_.begin(), touched_.end(), [&](TenantId a, TenantId b) {
    int da = usage_.tree().tenant(a).depth, db = usage_.tree().tenant(b).depth;
    return da != db ? da > db : a < b;
  });
  // Each touched tenant is an active child of its parent (touched too): ranges by parent.
  const QuotaTree& tree = usage_.tree();
  for (TenantId t : touched_) {
    if (TenantId p = tree.tenant(t).parent; p.valid()) ++entries_[p.value()].active_n;
  }
  uint32_t at = 0;
  for (TenantId t : touched_) {
    Entry& e = entries_[t.value()];
    e.active_at = at;
    at += e.active_n;
    e.active_n = 0;
  }
  active_.resize(at);
  for (TenantId t : touched_) {
    if (TenantId p = tree.tenant(t).parent; p.valid()) {
      Entry& pe = entries_[p.value()];
      active_[pe.active_at + pe.active_n++] = t;
    }
  }
  for (TenantId t : touched_) RefreshHead(t);
}

const Share& FairQueue::ShareOf(TenantId t) {
  Entry& e = entries_[t.value()];
  if (!e.share_valid) {
    e.share = WeightedDominantShare(usage_, t, capacity_, resource_count_);
    e.share_valid = true;
  }
  return e.share;
}

void FairQueue::RefreshHead(TenantId t) {
  Entry& e = entries_[t.value()];
  Head h = OwnHead(e);
  for (TenantId c : Active(e)) h = std::min(h, entries_[c.value()].head);
  e.head = h;
}

// Root to a tenant whose own queue is next: at each level the own queue or the child with
// (share, head) lowest, a total order since heads are distinct jobs.
void FairQueue::Descend(std::vector<Step>& path) {
  const QuotaTree& tree = usage_.tree();
  // The last descent's steps still hold while no share changed: jobs left only from the chosen
  // subtrees, so the others' heads are as they were, and a step's choice stands while its head
  // is still below its tie. The descent resumes at the first step that no longer holds.
  size_t keep = 0;
  if (path_valid_) {
    for (; keep < path.size(); ++keep) {
      const Step& s = path[keep];
      const Entry& e = entries_[s.at.value()];
      bool left;
      Head h;
      if (s.child.valid()) {
        const Entry& ce = entries_[s.child.value()];
        left = ce.count > 0;
        h = ce.head;
      } else {
        left = !e.own.empty();
        h = left ? OwnHead(e) : Head{};
      }
      if (!left || !(h < s.tie)) break;
    }
    if (keep == path.size()) return;
  }
  TenantId at = keep == 0 ? tree.root() : path[keep].at;
  path.resize(keep);
  path_valid_ = true;
  while (true) {
    Entry& e = entries_[at.value()];
    if (e.by_head_valid) {
      // No own jobs; the top is the earliest head of the lowest share, which every other
      // child's share exceeds; the tie is the next head of that share (the top's children).
      const ByHead& h = heaps_[e.heap];
      Head tie;
      if (h.size() > 1) tie = h[1].first;
      if (h.size() > 2) tie = std::min(tie, h[2].first);
      path.push_back({at, h[0].second, tie});
      at = h[0].second;
      continue;
    }
    TenantId best;  // invalid = own queue
    int ties = 0;   // children of the best share
    bool have = false;
    Share best_share;
    Head best_head;
    // The others of equal share to the best so far: the earliest of their heads.
    Head tie;
    if (!e.own.empty()) {
      best_share = ShareOf(at);
      best_head = OwnHead(e);
      have = true;
    }
    for (TenantId c : Active(e)) {
      const Entry& ce = entries_[c.value()];
      const Share& s = ShareOf(c);
      if (!have) {
        best = c;
        best_share = s;
        best_head = ce.head;
        have = true;
        ties = 1;
        continue;
      }
      std::strong_ordering order = s <=> best_share;
      if (order < 0) {
        best = c;
        best_share = s;
        best_head = ce.head;
        tie = Head{};
        ties = 1;
      } else if (order == 0) {
        ++ties;
        if (ce.head < best_head) {
          tie = std::min(tie, best_head);
          best = c;
          best_head = ce.head;
        } else {
          tie = std::min(tie, ce.head);
        }
      }
    }
    ALLOT_CHECK(have);
    path.push_back({at, best, tie});
    if (!best.valid()) break;
    const bool heapable = e.own.empty() && ties >= kHeapFrom;
    if (heapable && e.scans < 2) ++e.scans;
    if (heapable && e.scans == 2) {
      if (e.heap < 0) {
        e.heap = static_cast<int32_t>(heaps_.size());
        heaps_.emplace_back();
      }
      ByHead& h = heaps_[e.heap];
      h.clear();
      for (TenantId c : Active(e)) {
        if (ShareOf(c) == best_share) h.push_back({entries_[c.value()].head, c});
      }
      for (size_t i = h.size() / 2; i-- > 0;) SiftDown(h, i);
      e.by_head_valid = true;
    }
    at = best;
  }
}

// `n` jobs left the own queue of `leaf`: counts and heads on its path. Heads only move later,
// so above the leaf an ancestor's head changes only if it was the head of its child on the
// path before the pop (heads are distinct jobs); otherwise it and those above stay.
void FairQueue::Consumed(TenantId leaf, int64_t n) {
  Head was;  // the head, before the pop, of the tenant below on the path
  bool moved = true;
  for (TenantId a = leaf; a.valid(); a = usage_.tree().tenant(a).parent) {
    Entry& e = entries_[a.value()];
    e.count -= n;
    if (e.count == 0) Deactivate(a);
    if (!moved) continue;
    Head before = e.head;
    if (a == leaf || before == was) RefreshHead(a);
    moved = !(e.head == before);
    was = before;
    if (moved) HeadMoved(a);
  }
}

void FairQueue::SiftDown(ByHead& heap, size_t i) {
  const size_t n = heap.size();
  while (true) {
    size_t least = i, l = 2 * i + 1, r = l + 1;
    if (l < n && heap[l].first < heap[least].first) least = l;
    if (r < n && heap[r].first < heap[least].first) least = r;
    if (least == i) return;
    std::swap(heap[i], heap[least]);
    i = least;
  }
}

void FairQueue::HeadMoved(TenantId t) {
  TenantId p = usage_.tree().tenant(t).parent;
  if (!p.valid()) return;
  Entry& pe = entries_[p.value()];
  if (!pe.by_head_valid) return;
  ByHead& h = heaps_[pe.heap];
  // Only the chosen child's head moves, and the descent chose the top.
  ALLOT_CHECK(h.front().second == t);
  const Entry& e = entries_[t.value()];
  if (e.count == 0) {
    h.front() = h.back();
    h.pop_back();
  } else {
    h.front().first = e.head;
  }
  SiftDown(h, 0);
  if (h.empty()) pe.by_head_valid = false;  // the children left have higher shares: scan them
}

void FairQueue::Deactivate(TenantId t) {
  TenantId p = usage_.tree().tenant(t).parent;
  if (!p.valid()) return;
  Entry& pe = entries_[p.value()];
  TenantId* first = active_.data() + pe.active_at;
  TenantId* last = first + pe.active_n;
  TenantId* it = std::find(first, last, t);
  ALLOT_CHECK(it != last);
  *it = *(last - 1);
  --pe.active_n;
}

JobId FairQueue::Pop() {
  ALLOT_CHECK(!empty());
  auto never = [](uint32_t, const QueuedJob&) { return false; };
  auto none = [](uint32_t, const QueuedJob*, const QueuedJob*) {};
  auto next = PopNext(never, none);
  return next->job;
}

std::optional<FairQueue::Popped> FairQueue::PopNext(
    FunctionRef<bool(uint32_t, const QueuedJob&)> silent, FunctionRef<void(uint32_t, const QueuedJob*, const QueuedJob*)> settle) {
  if (!prepared_) Prepare();
  while (!empty()) {
    Descend(path_);
    TenantId leaf = path_.back().at;
    Entry& e = entries_[leaf.value()];
    auto& own = e.own;
    if (!silent(own.front().tag, *own.front().cur)) {
      std::pop_heap(own.begin(), own.end(), LaterHead<Run, Run>);
      Run& r = own.back();
      Popped out{JobId(r.cur->id), r.tag};
      if (++r.cur == r.end) {
        own.pop_back();
      } else {
        std::push_heap(own.begin(), own.end(), LaterHead<Run, Run>);
      }
      Consumed(leaf, 1);
      return out;
    }
    // When every run left is silent, nothing popped from here on can change anything: all
    // of them are settled at once. Looked for once the single batches since the last look
    // have cost as much as a look (one per run), so the looks cost at most what they save.
    if (++silent_batches_ >= runs_at_look_ && SettleIfAllSilent(silent, settle)) return std::nullopt;
    // The silent runs' jobs are popped, in order, while they stay ahead of the leaf's other
    // runs and the descent still leads here. At the leaf its children of equal share win
    // once the own head passes theirs; above, the chosen child's head is the least of the
    // own head and `rest` (its subtree without the leaf's own queue), so an equal-share
    // sibling wins only if its head is below `rest` too.
    Head bound = path_.back().tie;
    Head rest;
    for (TenantId c : Active(e)) rest = std::min(rest, entries_[c.value()].head);
    for (size_t i = path_.size() - 1; i-- > 0;) {
      const Step& s = path_[i];
      if (!(rest < s.tie)) bound = std::min(bound, s.tie);
      const Entry& pe = entries_[s.at.value()];
      if (!pe.own.empty()) rest = std::min(rest, OwnHead(pe));
      for (TenantId c : Active(pe)) {
        if (c != s.child) rest = std::min(rest, entries_[c.value()].head);
      }
    }
    // Each run asked once (the front was, above): a settle below only silences runs whose
    // heads already bound the batch, so their answer would not move anything.
    silent_of_.assign(own.size(), 1);
    for (size_t i = 1; i < own.size(); ++i) {
      silent_of_[i] = silent(own[i].tag, *own[i].cur);
      if (!silent_of_[i]) bound = std::min(bound, *own[i].cur);
    }
    int64_t n = 0;
    for (size_t i = 0; i < own.size(); ++i) {
      if (!silent_of_[i]) continue;
      Run& r = own[i];
      const QueuedJob* stop = std::lower_bound(r.cur, r.end, bound);
      if (stop == r.cur) continue;
      settle(r.tag, r.cur, stop);
      n += stop - r.cur;
      r.cur = stop;
    }
    ALLOT_CHECK(n > 0);
    own.erase(std::remove_if(own.begin(), own.end(), [](const Run& r) { return r.cur == r.end; }), own.end());
    std::make_heap(own.begin(), own.end(), LaterHead<Run, Run>);
    Consumed(leaf, n);
  }
  return std::nullopt;
}

bool FairQueue::SettleIfAllSilent(FunctionRef<bool(uint32_t, const QueuedJob&)> silent,
                                  FunctionRef<void(uint32_t, const QueuedJob*, const QueuedJob*)> settle) {
  silent_batches_ = 0;
  runs_at_look_ = 0;
  for (TenantId t : touched_) {
    for (const Run& r : entries_[t.value()].own) {
      ++runs_at_look_;
      if (!silent(r.tag, *r.cur)) return false;
    }
  }
  // In the tenants' order, each one's runs in their heap's: the order settled jobs are told in
  // is not a decision.
  for (TenantId t : touched_) {
    Entry& e = entries_[t.value()];
    for (const Run& r : e.own) settle(r.tag, r.cur, r.end);
    e.own.clear();
    e.count = 0;
    e.head = Head{};
    e.active_n = 0;
    e.by_head_valid = false;
  }
  path_valid_ = false;
  return true;
}

void FairQueue::OnUsageChanged(TenantId tenant) {
  path_valid_ = false;
  for (TenantId a = tenant; a.valid(); a = usage_.tree().tenant(a).parent) {
    entries_[a.value()].share_valid = false;
    // Its share moved among its siblings': the parent's heap by head no longer holds.
    if (TenantId p = usage_.tree().tenant(a).parent; p.valid()) {
      entries_[p.value()].by_head_valid = false;
      entries_[p.value()].scans = 0;
    }
  }
}

}  // namespace allot
