#!/usr/bin/env bash
# benchmarks/gpu_check.py on a lent GPU machine that has no package index and no espeak-ng, in two halves:
#   bash benchmarks/gpu_check_device.sh prepare   # here (after `make install`): the wheels (tools/device_wheels/)
#                                                 # and the recipes' smoke-size data (.gpu_check/work.tar.xz)
#   bash benchmarks/gpu_check_device.sh run [gpu_check.py options]   # there: tools/venv from the machine's
#                                                 # python3 + the wheels, then train / decode / measure; results to
#                                                 # $OUT/gpu_check.json (the device tool's folder) or
#                                                 # benchmarks/results/gpu_check.json
# With the device tool: carry [".gpu_check", "tools/device_wheels"] (about 45 MiB), command
# `bash benchmarks/gpu_check_device.sh run`, timeout_s 600 (or two calls, `run --recipes "sad1 asr1 unit1"`, then
# `run --recipes "tts1"`); then copy the JSON to benchmarks/results/ and rerun each recipe's scoring stage.
# A call cut off after training: the next call, on the still-warm machine and WITHOUT carrying .gpu_check again,
# `run --recipes X --resume` keeps the unpacked work dir and its trained models and only decodes and measures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
cmd=${1:-}; shift || true
case "${cmd}" in
    prepare)
        bash tools/device_wheels.sh
        rm -rf .gpu_check/work
        tools/venv/bin/python benchmarks/gpu_check.py --stage prepare --device cuda --workdir .gpu_check/work "$@"
        # the data dirs and scp files hold absolute paths: `run` rewrites this prefix to where the copy lands
        echo "${root}/.gpu_check/work" > .gpu_check/work/PREPARED_AT
        tar -C .gpu_check -cJf .gpu_check/work.tar.xz work
        rm -rf .gpu_check/work
        du -sh .gpu_check/work.tar.xz tools/device_wheels
        ;;
    run)
        if [[ " $* " == *" --resume "* ]] && [ -f .gpu_check/work/PREPARED_AT ]; then
            echo "gpu_check_device.sh: --resume: keeping .gpu_check/work and what it trained"
        else
            [ -f .gpu_check/work.tar.xz ] || { echo "gpu_check_device.sh: no .gpu_check/work.tar.xz: run 'prepare' first" >&2; exit 1; }
            rm -rf .gpu_check/work
            # Python's lzma: the machine's image may lack the xz program
            python3 -c 'import tarfile; tarfile.open(".gpu_check/work.tar.xz").extractall(".gpu_check", filter="data")'
            was=$(cat .gpu_check/work/PREPARED_AT) now=${root}/.gpu_check/work
            if [ "${was}" != "${now}" ]; then
                { grep -rlI --exclude='*.ark' --exclude='*.wav' -F "${was}" .gpu_check/work || true; } | while read -r f; do
                    sed -i "s#${was}#${now}#g" "${f}"
                done
            fi
            echo "${now}" > .gpu_check/work/PREPARED_AT  # paths rewritten: a --resume call keeps them
        fi
        [ -x tools/venv/bin/python ] || bash tools/device_venv.sh
        out=${OUT:-${root}/benchmarks/results}
        mkdir -p "${out}"
        PYTHONUNBUFFERED=1 tools/venv/bin/python benchmarks/gpu_check.py --stage run --device cuda \
            --workdir .gpu_check/work --out "${out}/gpu_check.json" "$@"
        ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
    *) echo "gpu_check_device.sh: prepare or run (see --help)" >&2; exit 1 ;;
esac
