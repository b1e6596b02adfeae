"""Train a VQ-VAE or codebook inverter with ESPnet2's trainer: `python -m local_models.bin.vqvae_train <espnet args>`.

Imports local_models.vqvae.task so that its model registry (vqvae, inverter) exists in this process and in
every process ESPnet spawns (docs/espnet2.md). All options are ESPnet's (`--help`)."""
from local_models.vqvae.task import VQVAETask


def main(cmd=None):
    VQVAETask.main(cmd=cmd)


if __name__ == "__main__":
    main()
