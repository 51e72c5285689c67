"""Building blocks: the from-scratch GRU and additive attention."""
from .attention import AdditiveAttention, masked_softmax
from .gru import GRU, AttentionGRUCell, GRUCell

__all__ = ["GRU", "GRUCell", "AttentionGRUCell", "AdditiveAttention", "masked_softmax"]
