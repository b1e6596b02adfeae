"""Models of the five reproduced papers, their ESPnet2 task plug-ins and shared recipe code.

Sub-packages:
  common/  data-dir I/O, audio loading, mini-corpus synthesis, job launcher (every recipe uses these)
  bin/     command-line entry points (`python -m local_models.bin.<tool>`), wrapped by `utils/`
"""
