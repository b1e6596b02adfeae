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
    record_command "$@"
    shift
    "$@"
}

# record_command DIR CMD...: DIR/run.sh, the exact command (run_logged's record, without running it)
record_command() {
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
}

# pool CMD...: run CMD in the background, at most ${nj} at a time; `pool_wait` waits for all (fails if one did).
# For independent jobs of one stage (systems to train): with one BLAS thread per process (utils/env.sh), nj
# jobs use nj cores.
# `decode_pool CMD...` is the same with at most ${inference_nj} decoding jobs at a time, `train_pool CMD...` with
# ${train_nj} training jobs (setup_devices: 1 when local jobs train on GPUs, which they would share; else nj).
# After a job fails no new one starts, and the running ones finish before run.sh stops (pool_wait): a rerun must
# not find a training still writing its exp dir.
pids=()
pool_failed=0
pool() { pool_n "${nj:-1}" "$@"; }
decode_pool() { pool_n "${inference_nj:-1}" "$@"; }
train_pool() { pool_n "${train_nj:-${nj:-1}}" "$@"; }
pool_n() {
    local width=$1; shift
    while [ "${pool_failed}" -eq 0 ] && [ "$(jobs -rp | wc -l)" -ge "${width}" ]; do wait -n || pool_failed=1; done
    if [ "${pool_failed}" -eq 0 ]; then "$@" & pids+=($!); fi
}
pool_wait() {
    local p rc=${pool_failed}
    for p in "${pids[@]}"; do wait "${p}" || rc=1; done
    pids=(); pool_failed=0
    [ "${rc}" -eq 0 ] || die "a background job failed (see the logs above)"
}

# ---- devices (ESPnet's option names: --ngpu, --gpu_inference, --inference_nj, --train_args, --inference_args,
# --inference_model). A recipe defines them before parse_options.sh with `ngpu=$(default_ngpu)` etc., then calls
# `setup_devices` once after it.

# default_ngpu: 1 when `nvidia-smi -L` lists a GPU, else 0 (CPU).
# With cmd_backend=slurm the jobs run elsewhere: give --ngpu explicitly (a login node usually lists none).
default_ngpu() {
    local n
    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)  # grep -c reads all: no SIGPIPE under pipefail
    if [ "${n:-0}" -gt 0 ]; then echo 1; else echo 0; fi
}

# --dist_world_size N (ESPnet2's trainer option, here at the recipe level): N > 1 trains each model with N CPU
# processes in one DDP group (--ngpu 0 only): torchrun (python -m torch.distributed.run --standalone) starts them on
# one machine (one job; Slurm: --cpus-per-task N), ESPnet2 reads their RANK / WORLD_SIZE / MASTER_ADDR and joins
# them with --dist_backend gloo; each mini-batch is split between the processes (batch[rank::N]), the gradients
# are averaged, rank 0 writes the checkpoints. GPUs: --ngpu N is DDP already (one process per GPU). Declared here,
# before any recipe's parse_options.sh, so that every recipe takes it; a recipe may declare it too (--help).
dist_world_size=1

# setup_devices: check --ngpu / --dist_world_size / --gpu_inference / --inference_nj, log them, and set
#   train_launch   the launcher of a training job: ${cuda_cmd} --gpu N with N GPUs, else ${train_cmd} (with
#                  --num-threads N for N CPU DDP processes)
#   decode_launch  the launcher of a decoding job: ${cuda_cmd} --gpu 1 with --gpu_inference true, else ${decode_cmd}
#   inference_ngpu the --ngpu of a decoding tool (0 or 1)
#   train_nj       trainings at a time (train_pool): nj, or 1 when local jobs train on GPUs, nj / N (at least 1)
#                  when each local training is N CPU processes
#   ddp_python     what runs a training's Python module: python, or torchrun's N processes on one node
#   ddp_opts       DDP options of the trainer: ESPnet2's own DDP with N > 1 GPUs on one node
#                  (--multiprocessing_distributed true), --dist_backend gloo for N CPU processes, else none
setup_devices() {
    [[ "${ngpu}" =~ ^[0-9]+$ ]] || die "--ngpu '${ngpu}': the number of GPUs a training job uses (0 = CPU)"
    [[ "${inference_nj}" =~ ^[1-9][0-9]*$ ]] || die "--inference_nj '${inference_nj}': a positive number of decoding jobs"
    case "${gpu_inference}" in true|false) ;; *) die "--gpu_inference '${gpu_inference}': true or false" ;; esac
    [ -n "${cuda_cmd:-}" ] || die "cmd.sh defines no cuda_cmd (the launcher of GPU jobs)"
    train_nj=${nj:-1}
    if [ "${ngpu}" -gt 0 ]; then
        train_launch="${cuda_cmd} --gpu ${ngpu}"
        # local jobs all see this machine's GPUs: one training at a time (Slurm gives each job its own)
        [ "${cmd_backend:-local}" != local ] || train_nj=1
    else
        train_launch=${train_cmd}
    fi
    [[ "${dist_world_size}" =~ ^[1-9][0-9]*$ ]] \
        || die "--dist_world_size '${dist_world_size}': the number of CPU training processes (1: no DDP)"
    ddp_opts="" ddp_python=python
    [ "${ngpu}" -le 1 ] || ddp_opts="--multiprocessing_distributed true"
    if [ "${dist_world_size}" -gt 1 ]; then
        # N GPUs already train in N processes (ESPnet2's own spawn); a world size on top would ask for more GPUs
        [ "${ngpu}" -eq 0 ] || die "--dist_world_size ${dist_world_size} is DDP on CPUs (--ngpu 0);" \
            "on GPUs give --ngpu N (one process per GPU)"
        train_launch="${train_cmd} --num-threads ${dist_world_size}"
        # local jobs share this machine's cores: N per training
        if [ "${cmd_backend:-local}" = local ]; then train_nj=$(( train_nj / dist_world_size )); fi
        [ "${train_nj}" -ge 1 ] || train_nj=1
        # ESPnet2 reads CUDA_VISIBLE_DEVICES as the GPUs its ranks map onto, even with --ngpu 0: a GPU-hiding ""
        # would refuse rank 1, so the CPU processes run without it (--ngpu 0 uses no GPU either way)
        ddp_python="env -u CUDA_VISIBLE_DEVICES python -m torch.distributed.run --standalone --nnodes 1"
        ddp_python+=" --nproc_per_node ${dist_world_size}"
        ddp_opts="--dist_backend gloo"
    fi
    if [ "${gpu_inference}" = true ]; then
        decode_launch="${cuda_cmd} --gpu 1"; inference_ngpu=1
    else
        decode_launch=${decode_cmd}; inference_ngpu=0
    fi
    # a local run cannot use GPUs this machine does not have (on Slurm the jobs run elsewhere: no check here)
    if [ "${cmd_backend:-local}" = local ] && { [ "${ngpu}" -gt 0 ] || [ "${gpu_inference}" = true ]; }; then
        local have
        have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
        [ "${have:-0}" -ge "${ngpu}" ] && { [ "${gpu_inference}" = false ] || [ "${have:-0}" -ge 1 ]; } \
            || die "--ngpu ${ngpu} --gpu_inference ${gpu_inference}, but nvidia-smi lists ${have:-0} GPU(s) here (cmd_backend=local); use --ngpu 0, or cmd_backend=slurm"
    fi
    local ddp=""
    [ -z "${ddp_opts}" ] || ddp=" (DDP)"
    [ "${dist_world_size}" -le 1 ] || ddp=" (DDP: ${dist_world_size} CPU processes, gloo)"
    log "devices: training --ngpu ${ngpu}${ddp}, decoding on $([ "${inference_ngpu}" = 1 ] && echo GPU || echo CPU)" \
        "(--gpu_inference ${gpu_inference}, --inference_nj ${inference_nj}), checkpoint ${inference_model}"
}

# espnet_train OUT TOOL [OPTIONS...]: ESPnet2 training with `python -m local_models.bin.TOOL` into OUT through
# ${train_launch}, on --ngpu GPUs (DDP when > 1) or --dist_world_size CPU processes (torchrun, gloo), resuming from
# OUT's checkpoint; --train_args come last (they win). The exact command is written to OUT/run.sh.
espnet_train() {
    local out=$1 tool=$2; shift 2
    # a resumed or re-run training overwrites train.log: the earlier runs' epochs stay in train.prev.log (reports)
    if [ -s "${out}/train.log" ]; then cat "${out}/train.log" >> "${out}/train.prev.log"; fi
    # shellcheck disable=SC2086  # train_args / ddp_python / ddp_opts are word lists, as ESPnet's asr.sh passes them
    run_logged "${out}" ${train_launch} "${out}/train.log" \
        ${ddp_python:-python} -m "local_models.bin.${tool}" --ngpu "${ngpu}" ${ddp_opts} --seed "${seed}" \
            --resume true --output_dir "${out}" "$@" ${train_args}
}

# ---- job backends (cmd.sh). A recipe's cmd.sh names its Slurm resources and calls this once:
#   cmd_setup --train "--mem 16G --time 24:00:00" --cuda "--mem 32G --time 24:00:00" --decode "--mem 4G --time 4:00:00"
# It exports train_cmd / cuda_cmd / decode_cmd for ${cmd_backend} (local: processes on this machine, resources
# ignored; slurm: sbatch arrays with those resources). Use: ${train_cmd} JOB=1:N <log> <command> (`launch --help`).
cmd_setup() {
    local train="" cuda="" decode=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --train) train=$2 ;; --cuda) cuda=$2 ;; --decode) decode=$2 ;;
            *) echo "cmd_setup: unknown option '$1' (--train, --cuda, --decode)" >&2; return 1 ;;
        esac
        shift 2
    done
    cmd_backend=${cmd_backend:-local}
    case "${cmd_backend}" in
        local) export train_cmd="launch --backend local" cuda_cmd="launch --backend local" \
                      decode_cmd="launch --backend local" ;;
        slurm) export train_cmd="launch --backend slurm ${train}" cuda_cmd="launch --backend slurm ${cuda}" \
                      decode_cmd="launch --backend slurm ${decode}" ;;
        *) echo "cmd.sh: unknown cmd_backend '${cmd_backend}' (local or slurm)" >&2; return 1 ;;
    esac
}

# up_to_date OUT IN...: OUT exists and is newer than every IN (a stage skips work whose inputs have not changed).
up_to_date() {
    local out=$1 f; shift
    [ -e "${out}" ] || return 1
    for f in "$@"; do [ "${out}" -nt "${f}" ] || return 1; done
}

# corpus_name VAR NAME: NAME when ./db.sh points VAR at a real corpus, else "mini" (the built-in mini corpus).
corpus_name() {
    local where
    where=$(. ./db.sh; eval "echo \"\${$1:-}\"")
    if [ -n "${where}" ]; then echo "$2"; else echo mini; fi
}

# pack_system PAPER SYSTEM...: the recipe's last stage for trained systems: exp/SYSTEM/packed/model.tar.gz each
# (`python -m local_models.bin.pack_model --help`), from the ${inference_model} checkpoint, in one process (its
# torch import paid once); the command is recorded in every exp/SYSTEM/packed/run.sh.
pack_system() {
    local paper=$1 s cmd; shift
    for s in "$@"; do require "exp/${s}" "the training stage of '${s}'"; done
    cmd=(python -m local_models.bin.pack_model --paper "${paper}" --recipe_dir .
         --inference_model "${inference_model:-valid.loss.best.pth}")
    for s in "$@"; do cmd+=(--system "${s}"); done
    for s in "$@"; do record_command "exp/${s}/packed" "${cmd[@]}"; done
    "${cmd[@]}"
}
