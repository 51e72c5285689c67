"""Solutions to notebook 07's checked exercises (self-critical training)."""
import torch

from dca_course.exercises import check_leave_one_out, check_self_critical_loss


def self_critical_by_hand(sample_lp, mask, r_sample, r_greedy):
    """07.1, eq. (15): -(r(y~) - r(y^)) sum_t log p(y~_t), averaged over the batch.
    sample_lp, mask (batch, steps); rewards (batch,)."""
    advantage = (r_sample - r_greedy).detach()                             # a number per sample, no gradient
    summed = (sample_lp * mask.to(sample_lp.dtype)).sum(dim=1)             # log p of each sample up to </s>
    return -(advantage * summed).mean()


def leave_one_out_by_hand(rewards, k):
    """07.2: the mean reward of the article's other k - 1 samples. rewards (k * batch,) in the order of
    list(articles) * k."""
    by_article = rewards.reshape(k, -1)                                    # (k, batch): row j = sample j
    others = (by_article.sum(dim=0, keepdim=True) - by_article) / (k - 1)
    return others.reshape(-1)


SOLUTIONS = {
    "07.1": (self_critical_by_hand, check_self_critical_loss),
    "07.2": (leave_one_out_by_hand, check_leave_one_out),
}
