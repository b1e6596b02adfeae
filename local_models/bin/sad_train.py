"""Train a neural SAD net with ESPnet2's trainer: `python -m local_models.bin.sad_train <espnet args>`.

Imports local_models.sad.task so that its model registry (cnn1d, rnn, seg_rnn) exists in this process
and in every process ESPnet spawns (docs/espnet2.md). All options are ESPnet's (`--help`)."""
from local_models.sad.task import SADTask


def main(cmd=None):
    SADTask.main(cmd=cmd)


if __name__ == "__main__":
    main()
