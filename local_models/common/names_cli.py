"""What every paper's torch-free `systems.py` command line shares (`python -m local_models.<paper>.systems QUERY`):
word lists that may come in as one shell word, and the answer as words on one line on stdout, or exit 1 with
`<prog>: <why>` on stderr for an unknown or malformed name. Standard library only: stages.sh calls these often."""
from __future__ import annotations

import sys
from typing import Callable, Iterable, Sequence, Tuple, Type


def words(args: Sequence[str]) -> list:
    """ARGS split into words: a list may come in as one shell word ("cnn_hmm rnn_hmm")."""
    return [w for a in args for w in a.split()]


def answer(prog: str, query: Callable[[], Iterable[str]], errors: Tuple[Type[Exception], ...] = (ValueError,)) -> int:
    """QUERY()'s words on one line (nothing for none), exit 0; one of ERRORS: `PROG: message` on stderr, exit 1."""
    try:
        out = list(query())
    except errors as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    if out:
        print(" ".join(out))
    return 0
