"""JDI-T (Lim et al., paper 002): Korean TTS on KSS.

Data side (this package so far): `g2p` (Hangul -> jamo-level phoneme tokens, offline, with `jamo`),
`data` (KSS transcript reader, held-out split, data dirs) and `durations` (jamo-token durations from
the mini corpus' true espeak-ng phone times). The models and their ESPnet2 task come later.
"""
