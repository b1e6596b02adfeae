"""Decoder CPU time saved by early switch-off of multi-softmax LID decoders (paper 001, Section 6.3).

The paper reports T_avg (decoders running, on average; eq. 2) and leaves "the correspondence between T_avg and
CPU inference cost" to future work. This measures it: for every (tau, s_th) setting, LID-free streaming
decoding of the test sets with the recipe's trained multisoftmax_lid model (one encoder pass per utterance,
shared by all settings), timing every language's beam search with process CPU time, one thread. Reported per
setting: T_avg, decoder CPU seconds (best of --repeats), its share of the all-decoders setting, WER and LID
accuracy, so the saving can be read against the accuracy it costs.

Writes RECIPE/exp/benchmarks/indic_switchoff.json and exp/images/switchoff_cpu.png.
  python benchmarks/indic_switchoff.py [--recipe egs/indic/asr1] [--grid "inf:inf 100:0.2 30:0.5 10:0.2"]
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_grid(text):
    out = []
    for item in text.split():
        tau, _, sth = item.partition(":")
        out.append((float(tau), float(sth)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipe", default=str(ROOT / "egs/indic/asr1"), help="recipe dir with exp/multisoftmax_lid")
    p.add_argument("--system", default="multisoftmax_lid")
    p.add_argument("--test-sets", default="", help="default: <lang>_test of the model's languages")
    p.add_argument("--grid", default="inf:inf 1000:0.2 100:0.2 30:0.2 30:0.5 10:0.2 30:40 30:80 10:40",
                   help="tau:s_th settings (default: run.sh's grid)")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--chunk", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3, help="best of N decoder timings per setting")
    args = p.parse_args(argv)
    import kaldiio
    import numpy as np
    import torch

    sys.path.insert(0, str(ROOT))
    from local_models.common.datadir import read_table
    from local_models.multisoftmax.decode import LidFreeDecoder, cpu_kernels, encode_chunks
    from local_models.multisoftmax.scoring import Counts, read_text
    from local_models.multisoftmax.task import load_trained
    from local_models.multisoftmax.units import decode as ids_to_units, units_to_text

    torch.set_num_threads(1)
    recipe = Path(args.recipe)
    model = load_trained(recipe / "exp" / args.system)
    net = model.net
    sets = args.test_sets.split() or [f"{l}_test" for l in net.langs]
    utts = []  # (utt, true lang, reference, [(h, lid log-post) chunks])
    enc_cpu = 0.0
    with cpu_kernels():
        for x in sets:
            refs = read_text(recipe / "data" / x / "text_norm")
            utt2lid = read_table(recipe / "data" / x / "utt2lid")
            for utt, feats in kaldiio.load_scp_sequential(str(recipe / "dump" / "fbank" / x / "feats.scp")):
                t0 = time.process_time()
                chunks = encode_chunks(net, model.normalise(torch.tensor(np.asarray(feats))), args.chunk, with_lid=True)
                enc_cpu += time.process_time() - t0
                utts.append((utt, utt2lid[utt], refs[utt], chunks))
    rows = []
    for tau, sth in parse_grid(args.grid):
        best_cpu, result_rows = None, None
        for _ in range(args.repeats):
            total_cpu, frames, active, counts, out = 0.0, 0, 0, Counts(), []
            with cpu_kernels():
                for utt, lang, ref, chunks in utts:
                    dec = LidFreeDecoder(net, args.beam, tau=tau, s_th=sth)
                    for h, lp in chunks:
                        dec.step(h, lp)
                    res = dec.result()
                    total_cpu += sum(res.cpu_s.values())
                    frames += res.frames
                    active += int(res.active_frames.sum())
                    units = ids_to_units(res.nbest[res.lang][0][0], net.token_lists[net.head_of(res.lang)])
                    counts.add(ref, units_to_text(units), res.lang == lang)
            if best_cpu is None or total_cpu < best_cpu:
                best_cpu, result_rows = total_cpu, (frames, active, counts)
        frames, active, counts = result_rows
        rows.append(dict(tau=tau, s_th=sth, t_avg=active / frames, decoder_cpu_s=best_cpu, wer=counts.wer,
                         lid_acc=counts.lid_acc, utts=counts.utts))
        print(f"tau {tau:>6} s_th {sth:>4}: T_avg {active / frames:.2f}  decoder CPU {best_cpu:7.2f} s  "
              f"WER {counts.wer:6.2f} %  LID {counts.lid_acc:5.1f} %", flush=True)
    full = next((r for r in rows if r["tau"] == float("inf") or r["s_th"] == float("inf")), rows[0])
    for r in rows:
        r["cpu_share_of_all_decoders"] = r["decoder_cpu_s"] / full["decoder_cpu_s"]
        r["t_avg_share"] = r["t_avg"] / full["t_avg"]
    out = dict(system=args.system, test_sets=sets, beam=args.beam, chunk=args.chunk, threads=1,
               encoder_cpu_s=enc_cpu, utterances=len(utts), rows=[{k: (str(v) if v == float("inf") else v)
                                                                    for k, v in r.items()} for r in rows])
    dest = recipe / "exp" / "benchmarks" / "indic_switchoff.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    plot(rows, recipe / "exp" / "images" / "switchoff_cpu.png")
    print(f"encoder CPU {enc_cpu:.2f} s (once per utterance, all settings); -> {dest}")
    return 0


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot([r["t_avg"] for r in rows], [r["decoder_cpu_s"] for r in rows], "o")
    for r in rows:
        ax.annotate(f"{r['tau']:g}/{r['s_th']:g}", (r["t_avg"], r["decoder_cpu_s"]), fontsize=7,
                    textcoords="offset points", xytext=(3, 3))
    ax.set_xlabel("T_avg (decoders running, on average)")
    ax.set_ylabel("decoder CPU [s], 1 thread")
    ax.set_title("Early switch-off: T_avg vs measured decoder CPU")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
