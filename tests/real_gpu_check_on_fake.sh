#!/bin/sh
# scripts/real-gpu-check against the fake NVML and mknod'd device nodes, so the script an operator
# runs on a GPU node (docs/real-gpu.md) does not rot between the rare runs on a real GPU.
# Usage: tests/real_gpu_check_on_fake.sh BUILD_DIR FAKE_NVML_LIBRARY
set -eu
B=$1
FAKE=$2
[ "$(id -u)" = 0 ] || { echo "SKIPPED LOUDLY: scripts/real-gpu-check needs root (cgroups, allot's own sandbox)"; exit 77; }
T=$(mktemp -d /var/tmp/real-gpu-check-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
scripts/fake-gpu-node "$T/node" > /dev/null
printf 'driver version=580.159.04\ngpus count=1 name="NVIDIA H100 80GB HBM3"\n' > "$T/nvml.conf"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FAKE_NVML_CONFIG="$T/nvml.conf" B="$B" ALLOT_CHECK_PORT="$PORT" ALLOT_CHECK_NVML="$FAKE" \
  ALLOT_CHECK_AGENT_ARGS="--device-root $T/node/dev --proc-driver-root $T/node/proc" \
  scripts/real-gpu-check "$T/out"
fail=0
T_OUT=$T/out
expect() {  # file text
  grep -qF -- "$2" "$T_OUT/$1" || { echo "FAILED: $1 lacks '$2':"; cat "$T_OUT/$1"; fail=1; }
}
expect summary.txt "agent registered: 1 node ready"
expect summary.txt "job probe: finished"
expect job-probe.txt "devices: nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl"
expect node-show.txt "1/1 H100-80GB idle"
expect node-check.txt "ok     nvml.gpus"
expect node-show.txt "isolation: complete (sandbox, tenant uids, device cgroup, cpu, memory and pids limits)"
expect job-oom.txt "memory limit 64 MiB exceeded (cgroup OOM kill)"
# The MPS pool: two tenants' half GPUs at once, each under its own control daemon (the fake's).
FAKE_NVML_CONFIG="$T/nvml.conf" B="$B" ALLOT_CHECK_PORT="$PORT" ALLOT_CHECK_NVML="$FAKE" ALLOT_CHECK_POOL=mps \
  ALLOT_CHECK_SHARE_SECONDS=10 ALLOT_CHECK_MPS_CONTROL="$(pwd)/tests/fakes/nvidia-cuda-mps-control" \
  ALLOT_CHECK_AGENT_ARGS="--device-root $T/node/dev --proc-driver-root $T/node/proc" \
  scripts/real-gpu-check "$T/mps"
T_OUT=$T/mps
expect summary.txt "pool: mps"
expect summary.txt "job share-a: finished"
expect summary.txt "job share-b: finished"
expect job-share-a.txt "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
daemons=$(grep -c '^## get_server_list' "$T_OUT/share-mps.txt")
[ "$daemons" = 2 ] || { echo "FAILED: $daemons MPS daemons while share-a and share-b ran, expected one a tenant:"; cat "$T_OUT/share-mps.txt"; fail=1; }
exit $fail
