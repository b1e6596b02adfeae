# Where the real corpus lives. Empty = build the mini corpus with espeak-ng (runs out of the box).
# Layout the toy reader expects: <TOY>/<speaker>/<utt>.wav with <utt>.txt beside it.
TOY=${TOY:-}
