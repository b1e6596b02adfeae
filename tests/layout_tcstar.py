"""TC-STAR Spanish TTS as its users lay it out, for the tests (tone audio; the tree, names and encodings follow the
sources below; the recordings themselves are licensed, ELRA-S0309 / S0310, and not seen here).

Sources:
- santi-pdp/musa_tts (the SALAD authors' MUSA code, which the paper builds on): README `synthesize.sh
  data/tcstar/lab/72/T6B72110000.lab 73_testing ...` and cfg/tcstar_72.cfg, cfg/tcstar_73.cfg, cfg/tcstar_79.cfg:
  one directory per speaker named by its number (72, 73, 79, ...), utterance stems `T6B<speaker><6 digits>`;
  musa/datasets/tcstar.py reads `<dir>/<speaker>/<stem>.lab` and `<aco_dir>/<speaker>/<stem>.{cc,fv,lf0}` and
  assumes 16 kHz audio (parse_lab_aco_correspondences: sr = 16000, 20 ms windows of 320 samples).
- musa/datasets/utils.py (label_parser, ogmios_fmt=True): the corpus's labels come from UPC's Ogmios front end,
  "start end label" lines whose full-context label separates its fields with `~` (`p1^p2-p3+p4=p5~p6_p7/A:...`)
  where HTS (and this recipe's front end) writes `@`; `foreign_labs=True` puts such files beside the wavs.
- SALAD paper (arXiv:1808.10678), section 4: TC-STAR's male and female speakers "M1" / "F1", the two with the most
  data, about 100 / 15 / 15 minutes of train / valid / test each; the paper does not say which numbers they are.
- TC-STAR deliverable D8, "TTS Baselines & Specifications" (Bonafonte et al., 2005), and the TC-STAR LREC 2006
  paper (lrec-conf.org/proceedings/lrec2006/summaries/719.html): the specification of these databases.
  Transcript encoding: not stated in any source found; ISO-8859-1 (Latin-1) is assumed, as in the SAM / SpeechDat
  family of ELRA databases these specifications follow, so the fixture writes Latin-1 (accented Spanish letters
  are then single bytes that are not valid UTF-8).
"""
from pathlib import Path

import numpy as np
import soundfile

SPEAKERS = ("72", "73")  # two of the baseline voices 72/73/75/76/79/80 (musa_tts cfg/tcstar_72.cfg, ...)
SENTENCES = ("El Parlamento aprobó la reforma.", "La sesión comenzó en junio.", "Señorías, votarán mañana.",
             "El Consejo pidió más información.", "Según la comisión, todo sigue igual.", "Ésa es la posición común.")
RATE = 16000


def stem(spk: str, i: int) -> str:
    return f"T6B{spk}{110000 + i:06d}"


def ogmios_label(phone: str) -> str:
    """A full-context label shaped like Ogmios's (musa_tts label_parser): `~` where HTS writes `@`."""
    return (f"x^x-{phone}+x=x~1_1/A:0_0/B:0-0-0~0-0&0-0#0-0$0-0!0-0;0-0|0/C:0+0+0/D:0_0/E:0+0~0+0&0+0#0+0"
            f"/F:0_0/G:0_0/H:0=0~0=0|0/I:0_0/J:0+0-0")


def make_tcstar(root: Path, speakers=SPEAKERS, n=6, encoding="latin-1", foreign_labs=False) -> dict:
    """A fake TC-STAR under ROOT: ROOT/<spk>/<T6B<spk>NNNNNN>.wav (16 kHz 16-bit mono tones, 0.8-1.3 s) with a
    one-line .txt transcript beside each in ENCODING; with foreign_labs, an Ogmios-format .lab beside each wav.
    Returns {spk: [stems]}."""
    out = {}
    for k, spk in enumerate(speakers):
        d = root / spk
        d.mkdir(parents=True)
        out[spk] = []
        for i in range(n):
            s = stem(spk, i)
            seconds = 0.8 + 0.1 * i
            t = np.arange(int(RATE * seconds)) / RATE
            f0 = 110 if k % 2 == 0 else 210  # a low and a high voice
            wave = 0.2 * np.sin(2 * np.pi * f0 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
            soundfile.write(d / f"{s}.wav", wave.astype(np.float32), RATE, subtype="PCM_16")
            (d / f"{s}.txt").write_bytes((SENTENCES[i % len(SENTENCES)] + "\r\n").encode(encoding))
            if foreign_labs:
                n_ph = 4
                step = int(seconds * 1e7) // n_ph
                (d / f"{s}.lab").write_text("".join(f" {j * step} {(j + 1) * step} {ogmios_label(p)}\n"
                                                    for j, p in enumerate("sil a e sil".split())))
            out[spk].append(s)
    return out
