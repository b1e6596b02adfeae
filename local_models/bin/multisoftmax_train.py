"""Train a multilingual RNN-T (mono / vanilla / onehot / multisoftmax [LSP, LID]) with ESPnet2's trainer:
`python -m local_models.bin.multisoftmax_train <espnet args>`.

Imports local_models.multisoftmax.task so that its model registry exists in this process and in every
process ESPnet spawns (docs/espnet2.md). All options are ESPnet's (`--help`)."""
from local_models.multisoftmax.task import TransducerTask


def main(cmd=None):
    TransducerTask.main(cmd=cmd)


if __name__ == "__main__":
    main()
