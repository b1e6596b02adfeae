"""Job launcher (Kaldi run.pl / slurm.pl equivalent) used through cmd.sh: see `launch --help`."""
import sys

from local_models.common.launcher import main as _launch_main


def main(argv=None):
    return _launch_main(argv)


if __name__ == "__main__":
    sys.exit(main())
