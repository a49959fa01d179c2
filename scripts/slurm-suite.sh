#!/usr/bin/env bash
# Run one coaplab suite on a Slurm cluster: one shard per array task, then a merge job.
#
#   scripts/slurm-suite.sh SUITE.toml N OUT [extra `coaplab suite run` options...]
#
# submits an array job of N tasks; task K runs `coaplab suite run SUITE --shard K/N --out
# OUT/shard-K` (shard K of every experiment x algorithm), and a job that starts when every task
# succeeded (afterok) runs `coaplab suite merge --out OUT/merged OUT/shard-*`, which scores the
# merged suite: its leaderboard.csv and ranking.csv are those of a single-machine run
# (docs/suite.md, "On a cluster: Dask and Slurm"). OUT must be on a file system every node sees,
# and so must the suite file and its scenarios. A task that was killed is resumed by submitting
# the same command again (a suite run always resumes its cells).
#
# COAPLAB (default: coaplab on PATH) is the binary; SBATCH_OPTS are extra sbatch options
# (partition, time limit). Extra options after OUT go to every `coaplab suite run` (--cc NAME...,
# --cc-from FILE.py..., which needs the coaplab Python package on the nodes and is passed to the
# merge too): they must be the same for every shard, or merge refuses the directories.
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
suite=$1 n=$2 out=$3
shift 3
coaplab=${COAPLAB:-coaplab}
mkdir -p "$out/logs"
quoted=$(printf ' %q' "$@")
# The --cc-from files go to the merge too: it reads cells of the Python algorithms.
cc_from= in_cc_from=0
for arg in "$@"; do
    case "$arg" in
        --cc-from) in_cc_from=1; cc_from=" --cc-from" ;;
        --*) in_cc_from=0 ;;
        *) [ "$in_cc_from" = 1 ] && cc_from+=" $(printf %q "$arg")" ;;
    esac
done

# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_OPTS:-} --array=1-"$n" --cpus-per-task=1 \
    --job-name=coaplab-suite-shard --output="$out/logs/shard-%a.log" --wrap \
    "$coaplab suite run $(printf %q "$suite") --shard \$SLURM_ARRAY_TASK_ID/$n \
     --out $(printf %q "$out")/shard-\$SLURM_ARRAY_TASK_ID --jobs \${SLURM_CPUS_PER_TASK:-1} \
     --quiet$quoted")

dirs=$(for k in $(seq 1 "$n"); do printf ' %q' "$out/shard-$k"; done)
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_OPTS:-} --dependency=afterok:"$array" \
    --job-name=coaplab-suite-merge --output="$out/logs/merge.log" --wrap \
    "$coaplab suite merge --out $(printf %q "$out")/merged$dirs$cc_from")
echo "submitted shards as job $array (array 1-$n) and the merge as job $merge -> $out/merged"
