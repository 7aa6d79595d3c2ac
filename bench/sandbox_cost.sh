#!/bin/bash
# What bubblewrap costs a short task, by hand: N runs in a row of the benchmark's job process
# (/bin/sh -c ': > s; : > e') as a tenant's uid, alone and inside bwrap with the arguments the
# runner gives a task (the host's root read-only, a fresh /dev, /proc, /tmp, the work root hidden
# and the task's directory bound back; one GPU's four nodes), and once with --share-net to show
# what the network namespace costs. Prints the CPU (user + sys, children included) per run.
# Needs root (mknod, setpriv). usage: bench/sandbox_cost.sh [N] [SCRATCH_DIR] [UID]
set -euo pipefail
N=${1:-200}
D=${2:-/tmp/allot-sandbox-cost}
U=${3:-200000}
# Absolute: the job runs with the sandbox's own working directory (a relative D found nothing
# there, and every bwrap run failed).
D=$(realpath -m "$D")
mkdir -p "$D/work/t/w" "$D/dev"
for n in nvidiactl nvidia-uvm nvidia-uvm-tools nvidia0; do [ -e "$D/dev/$n" ] || mknod "$D/dev/$n" c 1 3; done
chown -R "$U:$U" "$D/work/t"
chmod 755 "$D" "$D/work"
W=$D/work/t/w
COMMON=(--proc /proc --tmpfs /proc/driver --tmpfs /tmp --tmpfs "$D/work/t" --bind "$W" "$W" --unshare-all)
TAIL=(--new-session --die-with-parent --cap-drop ALL --chdir "$W" --)
GPU=()
for n in nvidiactl nvidia-uvm nvidia-uvm-tools nvidia0; do GPU+=(--dev-bind "$D/dev/$n" "/dev/$n"); done
run() {
  local name=$1
  shift
  local r
  r=$({ /usr/bin/time -f '%U %S' setpriv --reuid="$U" --regid="$U" --clear-groups bash -c \
        'for i in $(seq '"$N"'); do "$@" /bin/sh -c ": > $0/s; : > $0/e" || exit 1; done' "$W" "$@"; } 2>&1)
  echo "$r" | awk -v n="$N" -v name="$name" '{printf "%-34s %.2f ms CPU per run (user %.2f, sys %.2f)\n", name, ($1+$2)*1000/n, $1*1000/n, $2*1000/n}'
  # A bwrap run costs milliseconds: none at all over N runs means it measured nothing.
  if [ "$name" != alone ] && echo "$r" | awk '{exit !($1 + $2 == 0)}'; then
    echo "sandbox_cost: '$name' measured no CPU over $N runs ($r); expected some (more runs?)" >&2
    exit 1
  fi
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
run "alone"
run "in bwrap, no GPU" /usr/bin/bwrap --ro-bind / / --dev /dev "${COMMON[@]}" "${TAIL[@]}"
run "in bwrap, one GPU's nodes" /usr/bin/bwrap --ro-bind / / --dev /dev "${GPU[@]}" "${COMMON[@]}" "${TAIL[@]}"
run "in bwrap, one GPU, --share-net" /usr/bin/bwrap --ro-bind / / --dev /dev "${GPU[@]}" "${COMMON[@]}" --share-net "${TAIL[@]}"
