# Fearless Steps Phase-2 SAD corpus (FS02): the release's root. Empty = build the Apollo-like mini corpus with espeak-ng.
# As distributed: Data/Audio/Tracks/{Train,Dev,Eval}/FS02_<split>_NNN.wav (8 kHz mono) and the references
# Data/Transcripts/SAD/{Train,Dev}/FS02_<split>_NNN.txt, 12 tab-separated columns per interval (file, channel, start,
# end, S|NS, "manual", six X: the FS02 scoring toolkit's form); no Eval references (decode-only set). Also read: wavs
# under any directory named Train/Dev/Eval, a <stem>.txt (`start end label`) or <stem>.rttm anywhere (local/prepare_fs02.py).
# Every Train / Dev recording needs a reference: stage 1 stops naming the wavs without one.
FEARLESS_STEPS=${FEARLESS_STEPS:-}
# Non-speech for training augmentation (stage 1, as Kaldi's SAD recipes): MUSAN (music/ noise/ speech/, openslr 17)
# and RIRS_NOISES (simulated_rirs/, real_rirs_isotropic_noises/, openslr 28). Empty MUSAN = the recipe's built-in
# MUSAN-like set (downloads/nonspeech/train, from Debian packages: docs/data.md); empty RIRS_NOISES = synthetic rooms.
MUSAN=${MUSAN:-}
RIRS_NOISES=${RIRS_NOISES:-}
