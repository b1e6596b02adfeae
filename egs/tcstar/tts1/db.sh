# TC-STAR Spanish TTS corpus (licensed; ELRA). Empty = build the espeak-ng Spanish mini corpus.
# Set it to a directory with one sub-directory per speaker (e.g. M1/, F1/), each holding wav files and, with
# the same file stems, one-line .txt transcripts and optionally .lab full-context label files with times
# (utterances without a .lab get labels from the front end + alignment; see local/prepare_tcstar.py).
TCSTAR=${TCSTAR:-}
