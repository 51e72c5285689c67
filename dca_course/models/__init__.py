"""The course's models, one paper a module; what neither paper has is in :mod:`.extensions`, as
subclasses of the paper models.

Every source -> target model speaks the same decoding protocol, so greedy search, sampling,
beam search, the trainer and the evaluator serve them all:

* ``forward(batch) -> dict`` with ``"log_probs"`` (batch, tgt_len, width) under teacher forcing
  (and whatever else the model can show: ``"attn"``, ``"p_gen"``, ``"coverage"``...), written once
  over ``encode`` and ``step`` in :mod:`.teacher_forcing`;
* ``encode(batch) -> state``: a dict of batch-first tensors;
* ``step(y_prev, state) -> (log_probs, state, info)``: one decoding step;
* ``vocab_size``: V, the fixed vocabulary (width is V, or V + n_oov for a copying model).
"""
from .dca import DCA
from .dmn import DMN
from .gru_lm import GRULanguageModel
from .seq2seq import Seq2Seq

__all__ = ["DCA", "DMN", "GRULanguageModel", "Seq2Seq"]
