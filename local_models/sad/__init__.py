"""Speech activity detection (paper 004, Heitkaemper et al.): statistical SAD, CNN/RNN SAD, segment RNN,
reference detectors, and the OpenSAD-style scoring they are compared with."""
