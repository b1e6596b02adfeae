"""Feature dumps of the SALAD recipe (stage 3). Subcommands:

  feats    DATA_DIR OUT_DIR   raw acoustic (WORLD, 43 dims) + linguistic frames per utterance
  stats    TRAIN_DUMP OUT     stats.npz: acoustic min-max, linguistic z-norm of the real-valued dims
                              (--dur-stats: the duration model's phone-level z-norm and log-duration stats)
  windows  TRAIN_DUMP OUT_DIR the paper's stateful train arrangement (streams x windows)
"""
import argparse
import sys

from local_models.common.datadir import DataDirError


def get_parser():
    p = argparse.ArgumentParser(prog="salad_dump", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("feats", help="raw frame pairs of one data dir")
    f.add_argument("--questions", required=True, help="HTS question file (conf/questions_es.hed)")
    f.add_argument("--f0-method", default="harvest", choices=["harvest", "dio"])
    f.add_argument("--nj", type=int, default=1)
    f.add_argument("--max-dur-frames", type=int,
                   help="duration normaliser from the train dump (omit for the train set itself)")
    f.add_argument("data_dir")
    f.add_argument("out_dir")
    s = sub.add_parser("stats", help="normalisation statistics of a train dump")
    s.add_argument("--questions", required=True)
    s.add_argument("--dur-stats", help="also write the duration model's statistics here (dur_stats.npz)")
    s.add_argument("train_dump")
    s.add_argument("out")
    w = sub.add_parser("windows", help="stateful stream windows of a train dump")
    w.add_argument("--streams", type=int, default=32)
    w.add_argument("--window", type=int, default=120)
    w.add_argument("train_dump")
    w.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    from local_models.salad import data

    try:
        if args.cmd == "feats":
            n = data.dump_set(args.data_dir, args.out_dir, args.questions, args.f0_method, args.nj,
                              args.max_dur_frames)
            print(f"salad_dump feats: {n} utterances -> {args.out_dir}")
        elif args.cmd == "stats":
            data.fit_stats(args.train_dump, args.questions, args.out, args.dur_stats)
            print(f"salad_dump stats: {args.out}" + (f", {args.dur_stats}" if args.dur_stats else ""))
        else:
            per, dropped = data.make_windows(args.train_dump, args.out_dir, args.streams, args.window)
            print(f"salad_dump windows: {args.streams} streams x {per} windows of {args.window} frames "
                  f"({dropped} tail frames dropped) -> {args.out_dir}")
    except (DataDirError, FileNotFoundError, ValueError, RuntimeError) as e:
        sys.exit(f"salad_dump {args.cmd}: {e}")


if __name__ == "__main__":
    main()
