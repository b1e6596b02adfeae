"""Multi-softmax RNN-T for multilingual Indian-language ASR (paper 001): output units, features, model."""
