"""Run by tests/test_ddp.py under torchrun (or directly): train a tiny seq2seq and save each rank's weights."""
import sys

import torch

from dca_course import seed_everything
from dca_course.data import Vocab
from dca_course.data.batching import collate
from dca_course.data.toy import reverse
from dca_course.losses import sequence_nll
from dca_course.models import Seq2Seq
from dca_course.train import TrainConfig, dist_info, fit


def main(out_dir: str, batch_size: int, early: bool = False) -> None:
    seed_everything(0)
    # Equal lengths: every shard holds as many target tokens, so the mean of the ranks'
    # token-mean losses is the global token-mean loss and the gradients must agree.
    train = reverse(48, seed=5, min_len=5, max_len=5)
    vocab = Vocab.build([e.source for e in train])
    model = Seq2Seq(len(vocab), 8, 16)

    def loss_fn(m, b):
        return sequence_nll(m(b)["log_probs"], b.tgt_out, b.tgt_mask), {}

    config = TrainConfig(epochs=2, batch_size=batch_size, lr=1e-2, progress=False)
    scores = iter([0.5, 0.4, 0.3, 0.9, 0.9, 0.9])
    if early:   # rank 0 alone evaluates: a worse score every epoch, so it stops after epoch 3
        config = TrainConfig(epochs=6, batch_size=batch_size, lr=1e-2, progress=False, monitor="val_accuracy",
                             patience=2, lr_patience=1)
    history = fit(model, train, make_batch=lambda e: collate(e, vocab), loss_fn=loss_fn, config=config,
                  evaluate=(lambda m: {"val_accuracy": next(scores)}) if early else None, device=torch.device("cpu"))
    rank = dist_info().rank
    torch.save(model.state_dict(), f"{out_dir}/rank{rank}.pt")
    if early:
        lr = history.epochs[-1].get("lr")
        with open(f"{out_dir}/rank{rank}.txt", "w") as fh:
            fh.write(f"{len(history.epochs)} {lr}")
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), early=sys.argv[3:] == ["early"])
