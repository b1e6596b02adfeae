# Shell helpers for recipe stages; sourced by every recipe through path.sh -> utils/env.sh.

# log MSG: timestamped message naming the calling script and line (to stderr).
log() {
    local fname=${BASH_SOURCE[1]##*/}
    echo -e "$(date '+%Y-%m-%dT%H:%M:%S') (${fname}:${BASH_LINENO[0]}) $*" >&2
}

# die MSG: log an error and stop the recipe.
die() {
    log "ERROR: $*"
    exit 1
}

# require PATH "stage N (what)": stop with a message naming the stage that makes a missing input.
require() {
    [ -e "$1" ] || die "missing '$1': run ${2:-the stage that makes it} first"
}

# stage_enabled N: true when N lies in [stage, stop_stage].
stage_enabled() {
    [ "${stage}" -le "$1" ] && [ "${stop_stage}" -ge "$1" ]
}

# run_logged EXPDIR CMD...: write the exact command to EXPDIR/run.sh (rerunnable), then run it.
run_logged() {
    local dir=$1; shift
    mkdir -p "${dir}"
    {
        echo "#!/usr/bin/env bash"
        echo "# the exact command a stage of $(basename "$0") ran; rerun it from anywhere"
        printf 'cd %q && . ./path.sh && ' "${PWD}"
        printf '%q ' "$@"
        echo
    } > "${dir}/run.sh.tmp"
    chmod +x "${dir}/run.sh.tmp"
    mv "${dir}/run.sh.tmp" "${dir}/run.sh"
    "$@"
}

# pool CMD...: run CMD in the background, at most ${nj} at a time; `pool_wait` waits for all (fails if one did).
# For independent jobs of one stage (systems to train): with one BLAS thread per process (utils/env.sh), nj
# jobs use nj cores.
pids=()
pool() {
    while [ "$(jobs -rp | wc -l)" -ge "${nj:-1}" ]; do wait -n || die "a background job failed (see its log)"; done
    "$@" & pids+=($!)
}
pool_wait() {
    local p rc=0
    for p in "${pids[@]}"; do wait "${p}" || rc=1; done
    pids=()
    [ "${rc}" -eq 0 ] || die "a background job failed (see the logs above)"
}
