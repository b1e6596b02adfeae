# Fearless Steps Phase-2 SAD corpus (FS02). Empty = build the Apollo-like mini corpus with espeak-ng.
# Expected: wav files under a directory named Train/Dev/Eval (any depth, any case), and for every
# <stem>.wav with a reference a <stem>.txt (`start end label`, label S/NS) or <stem>.rttm anywhere under it.
FEARLESS_STEPS=${FEARLESS_STEPS:-}
# Non-speech for training augmentation (stage 1, as Kaldi's SAD recipes): MUSAN (music/ noise/ speech/, openslr 17)
# and RIRS_NOISES (simulated_rirs/, real_rirs_isotropic_noises/, openslr 28). Empty MUSAN = the recipe's built-in
# MUSAN-like set (downloads/nonspeech/train, from Debian packages: docs/data.md); empty RIRS_NOISES = synthetic rooms.
MUSAN=${MUSAN:-}
RIRS_NOISES=${RIRS_NOISES:-}
