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
