"""Installed into tools/venv by tools/install.sh (as speech_recipes_typecheck.py + a .pth line, so it runs at
every interpreter start): typeguard's @typechecked becomes a no-op, as it is under `python -O`.

Why: ESPnet, inflect (through g2p_en) and our tasks decorate about 160 functions with @typechecked, and typeguard 4
instruments each one at import time by re-parsing and re-compiling its whole module: 10-11 s of every process that
imports an ESPnet task on a 2-core machine (19 s -> 8 s for `import local_models.sad.task`). typeguard's own
documentation meant these checks for development, not for production runs; a recipe starts hundreds of such
processes. Nothing else changes: asserts stay, results are identical.

SPEECH_RECIPES_TYPECHECK=1 in the environment keeps the run-time type checks (what a developer hunting a type bug
wants).
"""
import os

if os.environ.get("SPEECH_RECIPES_TYPECHECK", "0") in ("", "0"):
    try:
        import typeguard
        import typeguard._decorators
    except ImportError:  # typeguard not installed (yet): nothing to switch off
        pass
    else:
        def typechecked(target=None, **_options):
            """typeguard.typechecked under -O: the target unchanged (also as @typechecked(...) with options)."""
            return (lambda t: t) if target is None else target

        typeguard.typechecked = typeguard._decorators.typechecked = typechecked
