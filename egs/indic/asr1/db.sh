# Indian-language ASR corpus (paper 001: En-IN, Hi-IN, Ta-IN, Gu-IN). Empty = build the espeak-ng mini corpus.
# INDIC is read in either layout (local/data.sh tells them apart by the language folders):
# - MUCS 2021 (Interspeech 2021 multilingual subtask) as distributed: the folder holding
#     <Language>/{train,test}/{audio/<utt_id>.wav,transcription.txt}, <Language> one of Gujarati Hindi Marathi
#     Odia Tamil Telugu (codes gu hi mr or ta te: ./run.sh --langs "gu hi mr or ta te"); dev is carved from
#     train and every language is read at the set's lowest rate, 8 kHz (local/prepare_mucs.py --help);
# - one Kaldi data dir per language and part, native-script transcripts: <lang>_train/ <lang>_dev/ <lang>_test/
#     for every code of run.sh's ${langs} (en hi ta gu), each with wav.scp, text, utt2spk [, segments]
#     (see local/prepare_indic.py --help).
INDIC=${INDIC:-}
