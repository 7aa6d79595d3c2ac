// A small cluster, built once, that the API harnesses resolve bodies against (as allotd resolves
// them against its state): two H100 nodes, one MIG-partitioned, and a short tenant tree.
#pragma once

#include <cstdlib>
#include <cstdio>

#include "spec/scenario.h"
#include "spec/setup.h"
#include "state/cluster_state.h"

namespace allot::fuzz {

inline constexpr const char* kFleetYaml = R"(
fleet:
  - {prefix: h100-, count: 2, zone: z1, rack: r1, cpu: 96, memory: 1024Gi, gpus: {model: H100-80GB, count: 8}}
  - {name: mig-0, zone: z1, rack: r2, cpu: 96, memory: 1024Gi,
     gpus: {model: H100-80GB, count: 8, sharing: mig, mig_layout: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}}
  - {name: a100-0, zone: z2, rack: r3, cpu: 64, memory: 512Gi, gpus: {model: A100-80GB, count: 4, sharing: mps}}
tenants:
  - {path: research, guarantee: {gpu/H100-80GB: 8}, max: {gpu/H100-80GB: 16}}
  - {path: research/nlp, guarantee: {gpu/H100-80GB: 4, cpu: 64, memory: 512Gi}}
  - {path: inference, trust: untrusted, max: {gpu/H100-80GB: 4}}
)";

// The state, or abort: a broken fixture must not pass for a fuzzing result.
inline const ClusterState& FixtureState() {
  static const ClusterState* state = [] {
    auto sc = ParseScenario(kFleetYaml, "fuzz_state.h");
    auto* st = new ClusterState();
    if (!sc || !BuildInitialState(*sc, *st).ok()) {
      std::fprintf(stderr, "fuzz_state.h: the fixture scenario does not build\n");
      std::abort();
    }
    return st;
  }();
  return *state;
}

}  // namespace allot::fuzz
