// The openb replay through the full pass (sim/openb_replay.h) on a small slice: each pod a job
// from its creation to its deletion time, shares on the MPS pools, whole GPUs and CPU-only pods
// on exclusive nodes, pods without times dropped or run to the trace's end, and the figures.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/openb_replay.h"

namespace allot {
namespace {

std::vector<OpenbNode> Nodes(const std::string& csv) {
  std::istringstream in(csv);
  auto n = ReadOpenbNodes(in, "nodes.csv");
  EXPECT_TRUE(n.has_value()) << n.error().message();
  return *n;
}

std::vector<OpenbPod> Pods(const std::string& csv) {
  std::istringstream in(csv);
  auto p = ReadOpenbPods(in, "pods.csv");
  EXPECT_TRUE(p.has_value()) << p.error().message();
  return *p;
}

const char* kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-a,64000,262144,2,G2\n"
    "node-b,64000,262144,2,G2\n"
    "node-c,32000,131072,1,T4\n";

const char* kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "whole-1,8000,16384,2,1000,,LS,Running,0,100,0\n"
    "whole-2,8000,16384,2,1000,,LS,Running,10,50,10\n"
    "whole-3,8000,16384,2,1000,,BE,Running,20,200,20\n"  // waits for whole-2 to leave at 50
    "share-1,4000,8192,1,500,,LS,Running,5,300,5\n"
    "share-2,4000,8192,1,500,,LS,Running,6,300,6\n"
    "cpu-1,2000,4096,0,0,,BE,Running,7,8,7\n"
    "instant,1000,1024,1,1000,,LS,Failed,30,30,\n"      // deleted at its creation: dropped
    "open,1000,1024,0,0,,LS,Running,40,,40\n";           // no deletion: runs to the trace's end (300)

TEST(OpenbReplay, MapsEachPodToAJobFromCreationToDeletion) {
  OpenbReplayInput in;
  auto sc = OpenbReplayScenario(Nodes(kNodes), Pods(kPods), {}, in);
  ASSERT_TRUE(sc.has_value()) << sc.error().message();
  EXPECT_EQ(in.pods, 8);
  EXPECT_EQ(in.dropped, 1);
  EXPECT_EQ(in.until_trace_end, 1);
  EXPECT_EQ(in.model, "G2");  // 4 of the 5 GPUs
  ASSERT_EQ(sc->jobs.size(), 7u);
  const ScenarioJob& w = sc->jobs[1];
  EXPECT_EQ(w.spec.name, "whole-2");
  EXPECT_EQ(w.tenant, "openb");
  EXPECT_EQ(w.spec.submit_ms, 10000);
  EXPECT_EQ(w.spec.duration_ms, 40000);
  EXPECT_EQ(w.spec.groups[0].gpu, 2 * kGpuUnit);
  EXPECT_EQ(w.spec.groups[0].cpu, 8000);
  EXPECT_EQ(w.spec.groups[0].memory, 16384);
  EXPECT_EQ(sc->jobs[3].spec.groups[0].gpu, kGpuUnit / 2);  // share-1: half a GPU
  EXPECT_EQ(sc->jobs[5].spec.groups[0].gpu, 0);             // cpu-1
  EXPECT_EQ(sc->jobs[6].spec.name, "open");
  EXPECT_EQ(sc->jobs[6].spec.duration_ms, 260000);  // to 300 s, the trace's last time stamp
  // Share demand 1,000 of 7,000 milli-GPUs: 1/7 of 3 nodes rounds to none; ask for one in three.
  EXPECT_EQ(in.mps_nodes, 0);
  auto one_pool = OpenbReplayScenario(Nodes(kNodes), Pods(kPods), {.mps_fraction = 0.34}, in);
  ASSERT_TRUE(one_pool.has_value());
  EXPECT_EQ(in.mps_nodes, 1);
  EXPECT_EQ(one_pool->nodes[2].sharing, Sharing::kMps);  // node-c: floor(3 × 0.34) passes 0 there
  EXPECT_EQ(one_pool->nodes[0].gpu_model, "G2");
  EXPECT_EQ(one_pool->nodes[2].gpu_model, "G2");  // one pool: no pod names a model
}

TEST(OpenbReplay, RefusesPodsItCannotMapNamingThePod) {
  OpenbReplayInput in;
  auto spec = OpenbReplayScenario(Nodes(kNodes), Pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1000,1024,1,1000,V100M16\n"), {}, in);
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message(), "openb replay: pod p: gpu_spec 'V100M16': the replay takes every GPU as one pool; expected no gpu_spec");
  auto multi = OpenbReplayScenario(Nodes(kNodes), Pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nq,1000,1024,2,500\n"), {}, in);
  ASSERT_FALSE(multi.has_value());
  EXPECT_EQ(multi.error().message(), "openb replay: pod q: num_gpu 2 with gpu_milli 500; expected gpu_milli 1000 when a pod asks several GPUs");
  std::istringstream bad("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\nr,1000,1024,1,1000,soon\n");
  auto pods = ReadOpenbPods(bad, "pods.csv");
  ASSERT_FALSE(pods.has_value());
  EXPECT_EQ(pods.error().message(), "pods.csv:2: creation_time: 'soon'; expected an integer from 0 to 315360000");
}

TEST(OpenbReplay, RunsThroughTheFullPassWithArrivalsAndDepartures) {
  OpenbReplayInput in;
  auto sc = OpenbReplayScenario(Nodes(kNodes), Pods(kPods), {.mps_fraction = 0.34}, in);
  ASSERT_TRUE(sc.has_value());
  OpenbReplayMeter meter;
  SimOptions o;
  o.verify = true;
  o.on_applied = [&](const Event& e, const ClusterState& st) { meter.Observe(e, st); };
  auto run = RunScenario(std::move(*sc), o, std::nullopt);
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const ClusterState& st = run->state;
  auto job = [&](const std::string& name) -> const Job& {
    for (const Job& j : st.jobs()) {
      if (j.spec.name == name) return j;
    }
    ADD_FAILURE() << "no job " << name;
    return st.jobs().front();
  };
  // node-a and node-b hold 2 GPUs each: whole-1 and whole-2 fill them, whole-3 waits for whole-2.
  EXPECT_EQ(job("whole-1").first_started_ms, 0);
  EXPECT_EQ(job("whole-2").first_started_ms, 10000);
  EXPECT_EQ(job("whole-3").first_started_ms, 50000);
  EXPECT_EQ(job("whole-3").finished_ms, 50000 + 180000);  // its whole duration after the wait
  // The two halves share node-c's GPU, the MPS pool.
  EXPECT_EQ(job("share-1").first_started_ms, 5000);
  EXPECT_EQ(job("share-2").first_started_ms, 6000);
  EXPECT_EQ(st.fleet().node(job("share-2").placement.front().node).name, "node-c");
  EXPECT_EQ(job("cpu-1").finished_ms, 8000);
  EXPECT_EQ(job("open").finished_ms, 300000);
  OpenbReplayMeter::Figures f = meter.Summarize(*run);
  EXPECT_EQ(f.jobs, 7);
  EXPECT_EQ(f.placed, 7);
  EXPECT_EQ(f.never_placed, 0);
  EXPECT_EQ(f.wait_max_s, 30);  // whole-3: 20 → 50
  EXPECT_EQ(f.peak_allocation, 1.0);  // 4 whole GPUs and two halves of the fifth, from 10 s to 50 s
  EXPECT_EQ(f.peak_at_s, 10);
  EXPECT_EQ(f.most_pending, 2);  // at 40 s `open` arrives while whole-3 waits, until that pass
  std::ostringstream out;
  PrintOpenbReplay(in, f, run->result.fleet_gpus, out);
  EXPECT_NE(out.str().find("placed 7 of 7; never placed 0; rejected 0"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("peak 100.00% at day 0, 00:00:10"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace allot
