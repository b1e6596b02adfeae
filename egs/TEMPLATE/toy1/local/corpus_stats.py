"""Scoring stage of the template: corpus statistics into exp/results.json and RESULTS.md."""
import argparse
from pathlib import Path

import kaldiio
import numpy as np

from local_models.common.datadir import read_table
from local_models.common.results import update_results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sets", nargs="+", required=True)
    args = p.parse_args(argv)
    systems, lines = {}, ["# RESULTS (template recipe: corpus statistics, no model)", "",
                          "| set | utterances | speakers | hours | frames | mean phone dur (ms) |", "|---|---|---|---|---|---|"]
    for name in args.sets:
        d = Path("data") / name
        dur = sum(float(v) for v in read_table(d / "utt2dur").values())
        frames = sum(m.shape[0] for _, m in kaldiio.load_scp_sequential(str(d / "feats.scp")))
        ctm = [line.split() for line in (d / "phones.ctm").read_text().splitlines()] if (d / "phones.ctm").is_file() else []
        phone_ms = 1000 * float(np.mean([float(f[3]) for f in ctm if f[4] != "sil"])) if ctm else float("nan")
        n_utt, n_spk = len(read_table(d / "utt2spk")), len(read_table(d / "spk2utt"))
        systems[name] = {"utterances": n_utt, "speakers": n_spk, "hours": dur / 3600, "frames": frames,
                         "phone_ms": phone_ms}
        lines.append(f"| {name} | {n_utt} | {n_spk} | {dur / 3600:.4f} | {frames} | {phone_ms:.1f} |")
    update_results("exp/results.json", "TEMPLATE/toy1", "mini", {"corpus": systems})
    Path("RESULTS.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
