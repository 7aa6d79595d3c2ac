#!/bin/sh
# A training task in miniature: counts steps, keeps the step it reached in $ALLOT_CHECKPOINT_DIR
# when told to stop (SIGTERM; $ALLOT_PREEMPT_FILE holds the kill deadline), and resumes there.
# Usage: workload.sh STEPS [SECONDS_PER_STEP]
total=${1:-30}
pace=${2:-1}
ck="$ALLOT_CHECKPOINT_DIR/step"
me="$ALLOT_JOB_NAME task $ALLOT_TASK_INDEX/$ALLOT_WORLD_SIZE"
step=0
if [ -f "$ck" ]; then
  step=$(cat "$ck")
  echo "$me: resumed at step $step from its checkpoint"
fi
echo "$me: uid $(id -u), GPUs $CUDA_VISIBLE_DEVICES, master $ALLOT_MASTER_ADDR"
echo "$me: device nodes: $(cd /dev && echo nvidia*)"
# The preempt file holds the deadline in ms since the epoch; people read it as RFC 3339.
trap 'ms=$(cat "$ALLOT_PREEMPT_FILE"); echo "$me: SIGTERM at step $step, kill deadline $(date -u -d "@$((ms / 1000))" +%Y-%m-%dT%H:%M:%SZ); checkpoint saved"; echo $step > "$ck"; exit 0' TERM
while [ "$step" -lt "$total" ]; do
  step=$((step + 1))
  echo "$me: step $step/$total"
  sleep "$pace" &
  wait $!  # (in the background, so SIGTERM is handled at once)
done
rm -f "$ck"
echo "$me: done"
