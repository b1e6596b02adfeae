#!/usr/bin/env bash
# Choose JDI-T's aligner settings on dev (issue #49): train the tiny JDI-T twice, with the departures from the paper
# that conf/tuning/train_jdit_tiny.yaml holds (transition agent, guided-attention weight 50, peak learning rate
# 1.021e-3) and with the paper's settings (no transition agent, weight 1, the plain Noam peak 5.103e-3), each in its
# own work dir exp/choose/<variant>/ (data, dump, conf and run.sh shared through links), score both on dev only (stage 5 aligns and
# synthesises dev, stage 6 scores it: exp/choose/<variant>/RESULTS_dev.md), and write the comparison with the rule
# fixed before any number was seen -> exp/choose/choice.md:
#   the variant with the lower JDI-T aligner duration MAE on dev (attention argmax, teacher forced, against the
#   engine events) is kept; a difference whose 95 % interval (bootstrap over utterances) straddles zero keeps the
#   paper's settings.
# Run after stages 1-3 (the mini corpus): bash local/choose_departures.sh [run.sh options, e.g. --seed 1; not the
# ones that set the variants, stages or sets]. The committed RESULTS_dev_choice.md: the departures were trained in
# the recipe root by stage 4 (the same command) and moved into exp/choose/departures before stages 5-6. The two
# trainings run at the same time, one CPU thread each (about 50 min on the 2-core machine at the tiny config).
# Sealed sets are never read: --test-sets is dev, and stage 5 refuses a sealed --dev-set.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh

declare -A variant_args=(
    [departures]=""
    [paper]="--tts_conf aligner_transition_agent=false --tts_conf guided_attn_weight=1.0 --optim_conf lr=5.103e-3"
)

# the variants' settings, the stages and the sets are this script's: options that would change them are refused
for a in "$@"; do
    case "${a}" in
        --train[-_]args*|--test[-_]sets*|--sealed[-_]sets*|--dev[-_]set*|--stage*|--stop[-_]stage*|--systems*)
            die "choose_departures: ${a%%=*} is set by this script (options go to run.sh: --seed, --nj, ...)" ;;
    esac
done

for v in departures paper; do
    d=exp/choose/${v}
    mkdir -p "${d}"
    for f in conf local path.sh cmd.sh db.sh run.sh data dump downloads; do
        [ -e "${f}" ] || continue
        ln -sfn "../../../${f}" "${d}/${f}"
    done
    log "choose_departures: ${v} -> ${d} (train_args: ${variant_args[${v}]:-none}; log: ${d}/run.log)"
    (cd "${d}" && ./run.sh "$@" --stage 4 --stop-stage 6 --systems jdit --train-pwg false --test-sets dev \
        --speed-benchmark false --results-md RESULTS_dev.md --train_args "${variant_args[${v}]}" \
        > run.log 2>&1) &
done
wait_all() { local rc=0; for j in $(jobs -p); do wait "${j}" || rc=1; done; return "${rc}"; }
wait_all || die "choose_departures: a variant failed (exp/choose/*/run.log)"
python -m local_models.bin.jdit_choose --dev-set dev --default paper --out exp/choose/choice.md \
    departures=exp/choose/departures paper=exp/choose/paper
log "choose_departures: exp/choose/choice.md"
