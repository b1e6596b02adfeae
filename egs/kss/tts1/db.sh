# KSS, Korean Single speaker Speech dataset (Park 2018; Kaggle: bryanpark/korean-single-speaker-speech-dataset).
# Empty = build the espeak-ng Korean mini corpus. Set it to the directory holding transcript.v.1.x.txt and the
# chapter directories 1/ .. 4/ with the 44.1 kHz wavs (also accepted: the wavs under <dir>/kss/1/ ..).
# See local/prepare_kss.py --help.
KSS=${KSS:-}
