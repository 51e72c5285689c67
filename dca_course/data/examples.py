"""The one example type that every source/target data set of the course yields.

Toy tasks, SynthNews and CNN/DailyMail all produce :class:`Example`, so one batching
function, one trainer and one evaluator serve them all.  bAbI has its own richer type
(stories, questions, supporting facts) in :mod:`dca_course.data.babi`.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Example:
    """A source/target pair of token lists.

    ``source`` and ``target`` are flat token lists (what a seq2seq model reads and writes).
    Summarization data sets also keep their structure:

    * ``paragraphs``: the source as paragraphs -> sentences -> tokens (DCA splits a document
      among agents by paragraph, lead-3 takes the first three sentences);
    * ``target_sents``: the reference summary as sentences -> tokens (ROUGE-Lsum);
    * ``facts``: what a generator knows to be true of the example (SynthNews), so that fact
      recall and hallucinated entities can be counted exactly.
    """

    source: list[str]
    target: list[str]
    paragraphs: list[list[list[str]]] | None = None
    target_sents: list[list[str]] | None = None
    facts: dict | None = None
    id: str = ""
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_document(cls, paragraphs, summary_sents, *, facts=None, id="", meta=None):
        """Build an example from a structured document and its sentence-split summary."""
        source = [tok for para in paragraphs for sent in para for tok in sent]
        target = [tok for sent in summary_sents for tok in sent]
        return cls(source, target, paragraphs=paragraphs, target_sents=summary_sents,
                   facts=facts, id=id, meta=dict(meta or {}))

    @property
    def source_sents(self) -> list[list[str]]:
        """The source as a list of sentences (one sentence if it has no structure)."""
        if self.paragraphs is None:
            return [self.source]
        return [sent for para in self.paragraphs for sent in para]

    def summary_text(self) -> str:
        """The target as newline-separated sentences, the form ROUGE-Lsum expects."""
        sents = self.target_sents or [self.target]
        return "\n".join(" ".join(s) for s in sents)
