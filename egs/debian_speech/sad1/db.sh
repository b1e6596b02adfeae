# The real-recording SAD corpus is built from Debian packages by stage 1 (local/make_real_corpus.py): no corpus root
# to set. SPEECH_RECIPES_DEBIAN (environment) moves the package cache (default ~/.cache/speech_recipes/debian).
