# ZeroSpeech 2019 "TTS without T" corpus. Empty = build the espeak-ng English mini corpus.
# Set it to the directory holding `english/` (english/train/unit/*.wav, english/train/voice/*.wav,
# english/test/*.wav, english/synthesis.txt; bitrate_filelist.txt is used when found, see local/prepare_zs2019.py).
# The ZeroSpeech 2020 release nests it: set it to <release>/2019. The corpus has no phone alignment: ABX needs the
# evaluation package's ABXpy item file, `./run.sh --abx-item <path>/by-context-across-speakers.item` (an item file,
# not the HDF5 task .abx); `--bitrate-filelist <path>/bitrate_filelist.txt` picks the bitrate's files.
ZEROSPEECH2019=${ZEROSPEECH2019:-}
