#!/usr/bin/env bash
# Run one coaplab scenario on a Slurm cluster: one shard per array task, then a merge job.
#
#   scripts/slurm-array.sh SCENARIO.toml N OUT [extra `coaplab run` options...]
#
# submits an array job of N tasks; task K runs `coaplab run SCENARIO --shard K/N --out
# OUT/shard-K`, and a job that starts when every task ended (afterok) runs `coaplab merge --out
# OUT/merged OUT/shard-*`. OUT must be on a file system every node sees. The merged directory
# is what a single-machine run gives (flows.csv and summary.csv byte for byte; see
# docs/scenarios.md, "More than one machine"). A task that was killed is resumed by submitting
# the same command again: each shard directory is run with --resume.
#
# COAPLAB (default: coaplab on PATH) is the binary; SBATCH_OPTS are extra sbatch options
# (partition, time limit, e.g. "--partition=short --time=01:00:00"). Extra options after OUT go
# to every `coaplab run` (e.g. --reps 10 --set network.buffer_bytes=2500): they must be the same
# for every shard, or merge refuses the directories as different plans.
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
scenario=$1 n=$2 out=$3
shift 3
coaplab=${COAPLAB:-coaplab}
mkdir -p "$out/logs"
quoted=$(printf ' %q' "$@")

# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_OPTS:-} --array=1-"$n" --cpus-per-task=1 \
    --job-name=coaplab-shard --output="$out/logs/shard-%a.log" --wrap \
    "$coaplab run $(printf %q "$scenario") --shard \$SLURM_ARRAY_TASK_ID/$n \
     --out $(printf %q "$out")/shard-\$SLURM_ARRAY_TASK_ID --jobs \${SLURM_CPUS_PER_TASK:-1} \
     --resume$quoted")

dirs=$(for k in $(seq 1 "$n"); do printf ' %q' "$out/shard-$k"; done)
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_OPTS:-} --dependency=afterok:"$array" \
    --job-name=coaplab-merge --output="$out/logs/merge.log" --wrap \
    "$coaplab merge --out $(printf %q "$out")/merged$dirs")
echo "submitted shards as job $array (array 1-$n) and the merge as job $merge -> $out/merged"
