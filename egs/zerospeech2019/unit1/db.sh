# ZeroSpeech 2019 "TTS without T" corpus. Empty = build the espeak-ng English mini corpus.
# Set it to the directory holding `english/` (english/train/unit/*.wav, english/train/voice/*.wav,
# english/test/*.wav, english/synthesis.txt; bitrate_filelist.txt is used when found, see local/prepare_zs2019.py).
ZEROSPEECH2019=${ZEROSPEECH2019:-}
