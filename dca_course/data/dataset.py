"""What a data spec loads: :class:`Dataset`, and :class:`SpecError` for a spec that cannot be."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError


class SpecError(InputError):
    """An unknown model, data spec or option; the message lists the valid choices."""


@dataclass
class Dataset:
    """Train/valid/test splits of one data spec.

    ``kind`` tells the recipes what they hold: ``"pairs"`` (toy source -> target tasks, scored
    by exact match), ``"summaries"`` (scored by ROUGE), ``"babi"`` (question answering).
    ``meta`` holds what a recipe may need to know about the set (decode lengths, bAbI tasks).
    """

    spec: str
    kind: str
    train: list
    valid: list
    test: list
    meta: dict = field(default_factory=dict)

    def limit_train(self, n: int) -> None:
        """Keep the first ``n`` training examples: of each task, when the set holds several
        tasks (``babi:all``), so that every task still trains on something."""
        if len(self.meta.get("tasks") or ()) > 1:
            seen: dict = {}
            kept = []
            for ex in self.train:
                seen[ex.task] = seen.get(ex.task, 0) + 1
                if seen[ex.task] <= n:
                    kept.append(ex)
            self.train = kept
        else:
            self.train = self.train[:n]

    def split(self, name: str) -> list:
        if name not in ("train", "valid", "test"):
            raise SpecError(f"unknown split {name!r}; choose from train, valid, test")
        return getattr(self, name)
