"""Spanish (Castilian) text front end of the SALAD recipe: text -> HTS-style full-context phone labels.

The paper (section 3.2) feeds the decoder hand-crafted features "extracted in the label format": phone identities
in a context window, part of speech, stress, positions and distances of syllables, words and phrases. This package
writes such labels; conf/questions_es.hed and `linguistic.py` turn them into vectors.

    analyse(text) -> Sentence          normalisation (numbers to words), words and punctuation, phrases split
                                       at punctuation, rule-based G2P with Castilian allophones, syllables,
                                       lexical stress, coarse part of speech, sentence type
    align(sentence, events, rate)      phone times: our phones DP-aligned to espeak-ng's phone events
    to_hts(sentence, times=None)       one label line per phone
    label_text(text, events, rate)     the three above in one call
    write_lab(path, lines), read_lab(path), parse_lab(lines, source)

Modules: phones (phone set, tag sets), normalisation, g2p (letters -> phonemes, glides, allophones), syllables,
pos (part of speech), sentence (analyse), alignment (espeak-ng), labels (to_hts, label_text), labfile (.lab).

Label format (one line per phone, shown wrapped here; a field is "xx" where it is undefined, not "x", which is
the jota phone):

    p1^p2-p3+p4=p5@p6_p7/A:a1_a2/B:b1-b2@b3-b4&b5-b6#b7-b8$b9-b10|b11/C:c1+c2/D:d1_d2
    /E:e1+e2@e3+e4&e5#e6+e7/F:f1_f2/G:g1_g2|g3/H:h1=h2^h3=h4|h5/I:i1_i2/J:j1+j2-j3!j4#j5=j6

    p1..p5  phones two before .. two after the current one p3 ("xx" beyond the utterance)
    p6 p7   position of the phone in its syllable, forward / backward (1 = first / last)
    A       previous syllable: stressed (0/1), number of phones
    B       current syllable: stressed, #phones, position in its word fw/bw, position in its phrase fw/bw,
            #stressed syllables before / after it in the phrase, distance in syllables to the previous / next
            stressed syllable of the phrase, its vowel
    C       next syllable: stressed, #phones
    D F     previous / next word: part of speech (POS_TAGS), #syllables
    E       current word: part of speech, #syllables, position in its phrase fw/bw, content word (0/1),
            #content words before / after it in the phrase
    G I     previous / next phrase: #syllables, #words; G also the previous phrase's final punctuation
    H       current phrase: #syllables, #words, position in the utterance fw/bw, final punctuation (PUNCTUATION)
    J       utterance: #syllables, #words, #phrases, sentence type (SENTENCE_TYPES), #syllables and #words after
            the current one (after the pause, for pauses)

Each field sits between a (left, right) pair of delimiters that no other field shares, and values are
alphanumeric, so the HTS pattern "*<left>VALUE<right>*" matches that field only. Pauses (sil, pau) have "xx" in
their own syllable, word and phrase fields (p6, p7, B, E, H); their A, D, G and C, F, I fields describe the units
before and after the pause.
"""
from .alignment import ESPEAK_PHONES, Alignment, align, phone_distance
from .g2p import Segment, allophones
from .labels import UNDEFINED, Labels, label_text, to_hts
from .labfile import LabLine, parse_lab, read_lab, write_lab
from .normalisation import normalise, number_words, unreadable_characters
from .phones import (CONTENT_POS, GLIDES, PHONE_CLASSES, PHONES, POS_TAGS, PUNCTUATION, PUNCTUATION_TYPES,
                     SENTENCE_TYPES, SILENCES, VOWELS)
from .pos import part_of_speech
from .sentence import Phone, Phrase, Sentence, Syllable, Word, analyse
from .syllables import syllabify

__all__ = [
    "PHONES", "PHONE_CLASSES", "SILENCES", "VOWELS", "GLIDES", "POS_TAGS", "CONTENT_POS", "PUNCTUATION",
    "PUNCTUATION_TYPES", "SENTENCE_TYPES", "number_words", "normalise", "unreadable_characters", "Segment", "syllabify", "allophones",
    "part_of_speech", "Phone", "Syllable", "Word", "Phrase", "Sentence", "analyse", "ESPEAK_PHONES",
    "phone_distance", "Alignment", "align", "UNDEFINED", "to_hts", "Labels", "label_text", "LabLine",
    "parse_lab", "read_lab", "write_lab",
]
