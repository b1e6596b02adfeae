"""Code shared by every recipe: Kaldi data dirs, audio, features, synthesis, jobs."""
