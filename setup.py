"""Speech-research recipe collection: the papers' models (`local_models`) and the shared recipe code.

Install through `make demo` / `make test` (tools/install.sh creates tools/venv with exact pins);
`pip install -e .` alone does not pull the pinned torch/espnet stack.
"""
from setuptools import find_packages, setup

setup(
    name="speech-recipes",
    version="0.1.0",
    description="ESPnet2-style recipes reproducing five speech papers (SALAD, multi-softmax RNN-T, JDI-T, "
    "Transformer VQ-VAE, statistical/neural SAD)",
    python_requires=">=3.11,<3.12",
    packages=find_packages(include=["local_models", "local_models.*"]),
    package_data={"local_models": ["**/*.txt", "**/*.yaml", "sad/pretrained/*.tar.gz", "sad/pretrained/*.md"]},
    install_requires=["numpy", "soundfile", "kaldiio", "tqdm", "pyyaml", "threadpoolctl"],
    extras_require={"test": ["pytest"]},
    # the inference commands (each also runs as `python -m local_models.bin.<module>`; --help on each)
    entry_points={"console_scripts": [
        "speech-segments = local_models.bin.speech_segments:cli",
        "speech-to-text = local_models.bin.speech_to_text:cli",
        "text-to-speech = local_models.bin.text_to_speech:cli",
        "speech-to-units = local_models.bin.speech_to_units:cli",
        "units-to-speech = local_models.bin.units_to_speech:cli",
    ]},
)
