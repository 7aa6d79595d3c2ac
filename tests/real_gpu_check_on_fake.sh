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
expect() {  # file text
  grep -qF -- "$2" "$T/out/$1" || { echo "FAILED: $1 lacks '$2':"; cat "$T/out/$1"; fail=1; }
}
expect summary.txt "agent registered: 1 node ready"
expect summary.txt "job probe: finished"
expect job-probe.txt "devices: nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl"
expect node-show.txt "1/1 H100-80GB idle"
expect node-check.txt "ok     nvml.gpus"
expect node-show.txt "isolation: complete (sandbox, tenant uids, device cgroup, cpu, memory and pids limits)"
expect job-oom.txt "memory limit 64 MiB exceeded (cgroup OOM kill)"
exit $fail
