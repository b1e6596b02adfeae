# TC-STAR Spanish TTS corpus (licensed; ELRA-S0309 / S0310). Empty = build the espeak-ng Spanish mini corpus.
# Set it to a directory with one sub-directory per speaker (TC-STAR numbers them: 72/, 73/, ...; e.g. M1/, F1/),
# each holding wav files and, with the same file stems (T6B72110000.wav, ...), one-line .txt transcripts (UTF-8,
# or Latin-1 / cp1252, detected and logged) and optionally .lab full-context label files with times in this
# recipe's format (a label file of another format is refused; utterances without a .lab get labels from the front
# end + alignment; see local/prepare_tcstar.py --help). Name the corpus speakers that are the paper's M1 / F1 with
# ./run.sh --speaker_map "72:M1 73:F1" (which numbers they are is your choice: the paper does not say).
TCSTAR=${TCSTAR:-}
