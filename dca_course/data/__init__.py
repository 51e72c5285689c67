"""Data: vocabularies with per-example OOV ids, batching, and the course's data sets."""
from .examples import Example
from .vocab import Vocab, PAD, UNK, BOS, EOS

__all__ = ["Example", "Vocab", "PAD", "UNK", "BOS", "EOS"]
