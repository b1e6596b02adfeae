# Fearless Steps Phase-2 SAD corpus (FS02). Empty = build the Apollo-like mini corpus with espeak-ng.
# Expected: wav files under a directory named Train/Dev/Eval (any depth, any case), and for every
# <stem>.wav with a reference a <stem>.txt (`start end label`, label S/NS) or <stem>.rttm anywhere under it.
FEARLESS_STEPS=${FEARLESS_STEPS:-}
