"""Read <db>/<speaker>/<utt>.wav + <utt>.txt into data/{train,test} (last speaker = test)."""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import write_data_dir


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("db")
    p.add_argument("out")
    args = p.parse_args(argv)
    speakers = sorted(d for d in Path(args.db).iterdir() if d.is_dir())
    if len(speakers) < 2:
        sys.exit(f"prepare_real: {args.db}: need at least 2 speaker directories, found {len(speakers)}")
    for subset, spks in (("train", speakers[:-1]), ("test", speakers[-1:])):
        wav, utt2spk, text = {}, {}, {}
        for spk in spks:
            for w in sorted(spk.glob("*.wav")):
                txt = w.with_suffix(".txt")
                if not txt.is_file() or not txt.read_text().strip():
                    sys.exit(f"prepare_real: {txt}: missing or empty transcript")
                utt = f"{spk.name}-{w.stem}"
                wav[utt], utt2spk[utt], text[utt] = str(w.resolve()), spk.name, " ".join(txt.read_text().split())
        write_data_dir(Path(args.out) / subset, wav, utt2spk, text=text)


if __name__ == "__main__":
    main()
