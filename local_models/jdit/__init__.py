"""JDI-T (Lim et al., paper 002): Korean TTS on KSS.

Data side: `g2p` (Hangul -> jamo-level phoneme tokens, offline, with `jamo`), `data` (KSS transcript reader,
held-out split, data dirs) and `durations` (jamo-token durations from the mini corpus' true espeak-ng phone
times). Model side: `model.JDIT` (feed-forward Transformer + duration predictor, jointly trained with an
autoregressive aligner), `attention` (forward attention of Algorithm 1, durations from attention) and `task`
(registers `tts: jdit` in ESPnet2's TTS task; `python -m local_models.bin.jdit_train`).
"""
