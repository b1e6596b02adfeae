# Indian-language ASR corpus (paper 001: En-IN, Hi-IN, Ta-IN, Gu-IN). Empty = build the espeak-ng mini corpus.
# Set it to a directory holding one Kaldi data dir per language and part, native-script transcripts:
#   <lang>_train/ <lang>_dev/ <lang>_test/ for every code of run.sh's ${langs} (en hi ta gu), each with
#   wav.scp, text, utt2spk [, segments] (see local/prepare_indic.py --help).
INDIC=${INDIC:-}
