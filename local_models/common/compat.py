"""Compatibility shims for pinned third-party packages; import this before those packages.

parallel-wavegan 0.6.1 does `from scipy.signal import kaiser`, which current scipy removed
(it lives in scipy.signal.windows). Restoring the alias lets `parallel_wavegan.models` import.
"""
import scipy.signal
import scipy.signal.windows

if not hasattr(scipy.signal, "kaiser"):
    scipy.signal.kaiser = scipy.signal.windows.kaiser


def import_parallel_wavegan_models():
    """Return the `parallel_wavegan.models` module with the shims applied."""
    import parallel_wavegan.models

    return parallel_wavegan.models


def no_nltk_downloads():
    """Make `nltk.download` a no-op (returns False). g2p_en, which espnet2.text.phoneme_tokenizer (and so
    espnet2.tasks.tts) imports, calls it at import time when its English data is missing: a network access
    at run time, with a page of errors offline, for an English g2p our recipes never use. Call this before
    importing espnet2.tasks.tts or espnet2.train.collate_fn (every task module here does, first thing); using
    g2p_en afterwards fails with nltk's own "resource not found" error."""
    import nltk

    nltk.download = lambda *args, **kwargs: False
