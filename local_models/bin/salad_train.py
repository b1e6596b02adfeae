"""Train a SALAD or MUSA-RNN acoustic model with ESPnet2's trainer: `python -m local_models.bin.salad_train <espnet args>`.

Imports local_models.salad.task so that its model registry (salad, rnn) exists in this process and in every
process ESPnet spawns (docs/espnet2.md). All options are ESPnet's plus `--stateful` (`--help`)."""
from local_models.salad.task import SaladTask


def main(cmd=None):
    SaladTask.main(cmd=cmd)


if __name__ == "__main__":
    main()
