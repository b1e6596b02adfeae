"""Compatibility shims for pinned third-party packages.

- parallel-wavegan 0.6.1 does `from scipy.signal import kaiser`, which current scipy removed (it lives in
  scipy.signal.windows): `scipy_kaiser_alias()` restores it; call it (or `import_parallel_wavegan_models()`) before
  importing parallel_wavegan. It is not done at import time here: scipy.signal costs about 1.3 s of every process
  start, and only the vocoder paths need it.
- espnet2.text.phoneme_tokenizer imports g2p_en at module level; g2p_en imports nltk (about 1 s: nltk pulls
  scikit-learn) and calls `nltk.download` at import time when its English data is missing, a network access with a
  page of errors offline, for an English g2p our recipes never use. `no_nltk_downloads()` makes g2p_en a placeholder
  module: nothing of it or of nltk runs until someone uses it, and then with `nltk.download` a no-op.
- ESPnet's Trainer and CommonCollateFn import, at their import time, modules our tasks use rarely or never (the JETS
  aligner with scipy.stats / numba / librosa; the preprocessor with scipy.signal and every tokenizer):
  `lean_espnet_imports()` defers them (`defer_module`) until first use.
"""
import functools
import importlib
import importlib.util
import sys
import types


def scipy_kaiser_alias() -> None:
    """scipy.signal.kaiser -> scipy.signal.windows.kaiser (parallel-wavegan 0.6.1 imports the old name)."""
    import scipy.signal
    import scipy.signal.windows

    if not hasattr(scipy.signal, "kaiser"):
        scipy.signal.kaiser = scipy.signal.windows.kaiser


def import_parallel_wavegan_models():
    """Return the `parallel_wavegan.models` module with the shims applied."""
    scipy_kaiser_alias()
    import parallel_wavegan.models

    return parallel_wavegan.models


def _disable_nltk_downloads() -> None:
    import nltk

    nltk.download = lambda *args, **kwargs: False


def no_nltk_downloads() -> None:
    """Make `import g2p_en` cheap and download-free. Call it before importing espnet2.tasks.* or
    espnet2.train.collate_fn (every task module here does, first thing, through lean_espnet_imports). `import g2p_en`
    then binds a placeholder module (defer_module); its first attribute use, or a submodule import, imports the real
    g2p_en with nltk.download a no-op, so using it offline fails with nltk's own "resource not found" error.
    (importlib's LazyLoader would not do: the import statement itself reads the module's __spec__, which loads it.)"""
    if "g2p_en" in sys.modules:  # already imported (by us or for real): make sure a loaded nltk cannot download
        if "nltk" in sys.modules:
            _disable_nltk_downloads()
        return
    defer_module("g2p_en", before_load=_disable_nltk_downloads, submodules=True)


def _load_deferred(placeholder: types.ModuleType, before_load) -> types.ModuleType:
    """The real module behind PLACEHOLDER, imported now (BEFORE_LOAD first); the placeholder becomes a plain copy of
    it (a miss is then an AttributeError, not a second import). A failed import leaves the placeholder in place."""
    name = placeholder.__name__
    if sys.modules.get(name) is placeholder:
        del sys.modules[name]
    try:
        if before_load is not None:
            before_load()
        real = importlib.import_module(name)
    except BaseException:
        sys.modules.setdefault(name, placeholder)
        raise
    if "__getattr__" in placeholder.__dict__:
        del placeholder.__dict__["__getattr__"]
        placeholder.__dict__.update(real.__dict__)
    return real


def _deferred_attribute(placeholder: types.ModuleType, before_load, submodules: bool, attr: str):
    # dunder probes (inspect, pickle, hasattr(__wrapped__), a from-import's __path__) do not load it, but for
    # SUBMODULES a __path__ does: `import NAME.sub` needs the real package
    if attr.startswith("__") and attr.endswith("__") and not (submodules and attr == "__path__"):
        raise AttributeError(attr)
    return getattr(_load_deferred(placeholder, before_load), attr)


def _deferred_function(placeholder: types.ModuleType, before_load, attr: str):
    def call(*args, **kwargs):
        return getattr(_load_deferred(placeholder, before_load), attr)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attr
    return call


def defer_module(name: str, functions=(), before_load=None, submodules: bool = False) -> None:
    """Bind module NAME to a placeholder that imports the real module on first use: the first call of one of its
    FUNCTIONS (what other modules `from NAME import` at their import time), the first read of any other attribute,
    and with SUBMODULES true the first submodule import. BEFORE_LOAD() runs just before that import. Nothing happens
    when NAME is imported already or cannot be found."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        return
    placeholder = types.ModuleType(name, f"{name}, imported on first use (local_models.common.compat)")
    placeholder.__spec__, placeholder.__file__ = spec, spec.origin
    # PEP 562: __getattr__ answers unknown names only
    placeholder.__getattr__ = functools.partial(_deferred_attribute, placeholder, before_load, submodules)
    for attr in functions:
        setattr(placeholder, attr, _deferred_function(placeholder, before_load, attr))
    sys.modules[name] = placeholder
    parent, _, child = name.rpartition(".")
    if parent:  # `import a.b.c` then `a.b.c.x` reads the parent's attribute
        setattr(importlib.import_module(parent), child, placeholder)


# What ESPnet's training stack imports at its import time only for paths our tasks rarely or never run: the Trainer's
# attention plots (calculate_all_attentions imports the JETS aligner, with scipy.stats, numba and librosa), and
# CommonCollateFn's silence detection (the preprocessor module imports scipy.signal, librosa and every tokenizer).
# About 1.5 CPU-s of every training or decoding process start (2 cores, 2026-11-29).
_DEFERRED = {"espnet2.main_funcs.calculate_all_attentions": ("calculate_all_attentions",),
             "espnet2.train.preprocessor": ("detect_non_silence",)}


def lean_espnet_imports() -> None:
    """Call before importing espnet2.tasks.*, espnet2.train.trainer or espnet2.train.collate_fn (every task module
    here does, first thing): g2p_en without nltk downloads (no_nltk_downloads), and the modules of _DEFERRED imported
    on first use."""
    no_nltk_downloads()
    for name, functions in _DEFERRED.items():
        defer_module(name, functions)
