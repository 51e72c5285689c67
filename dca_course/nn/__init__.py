"""Building blocks: the from-scratch GRU, additive attention, the bidirectional encoder
(:mod:`.encoders`) and the copying distribution over the extended vocabulary (:mod:`.copying`)."""
from .attention import AdditiveAttention, masked_softmax
from .gru import GRU, AttentionGRUCell, GRUCell

__all__ = ["GRU", "GRUCell", "AttentionGRUCell", "AdditiveAttention", "masked_softmax"]
