"""JDI-T (Lim et al., paper 002): Korean TTS on KSS.

Data side: `phonemes` (Korean text -> espeak-ng phoneme tokens, one per phone event of the mini corpus: the
recipe's default), `g2p` (Hangul -> jamo-level tokens, offline, with `jamo`: recorded speech), `data` (KSS
transcript reader, held-out split, data dirs), `durations` (per-token durations from the mini corpus' true
espeak-ng phone times: one to one, or aligned to jamo) and `text` (what `bin/jdit_text` writes: text_phn, token
list, shapes, durations). Model side:
`model.JDIT` (feed-forward Transformer + duration predictor, jointly trained with an autoregressive aligner),
`attention` (forward attention of Algorithm 1, durations from attention) and `task` (registers `tts: jdit` in
ESPnet2's TTS task; `python -m local_models.bin.jdit_train`). Recipe side (egs/kss/tts1): `inference`
(synthesis with any of its systems, `bin/jdit_synth`), `vocoder` (Griffin-Lim, Parallel WaveGAN training and
synthesis, `bin/jdit_pwg_train`), `align` (the aligner's and predictor's durations, `bin/jdit_align`), `metrics` and
`report` (scoring, `bin/jdit_score`). Users' side: `frontend` (typed text: numbers, %, Latin letters spelled, then
g2p), `pack` (the recipe's last stage: one archive per system with its vocoder, `bin/pack_model --paper jdit`),
`inference.Text2Speech` (typed text -> wav in one call, from an archive or an exp dir; the `text-to-speech`
command) and `demo` (local/demo.sh's summary, `bin/jdit_demo`). Names: `systems` (the recipe's systems, labels,
vocoders, torch-free; `python -m local_models.jdit.systems` for stages.sh).
"""
