"""Solutions to notebook 07's checked exercises (self-critical training)."""
import torch

from dca_course.exercises import check_leave_one_out, check_self_critical_loss


def self_critical_by_hand(sample_lp, mask, r_sample, r_greedy):
    """07.1, eq. (15): -(r(y~) - r(y^)) sum_t log p(y~_t), averaged over the batch.
    sample_lp, mask (batch, steps); rewards (batch,)."""
    advantage = (r_sample - r_greedy).detach()                             # a number per sample, no gradient
    summed = (sample_lp * mask.to(sample_lp.dtype)).sum(dim=1)             # log p of each sample up to </s>
    return -(advantage * summed).mean()


def leave_one_out_closed_form(rewards, k):
    """07.2: b_i = (k r_mean - r_i) / (k - 1), the mean of the article's other k - 1 rewards.
    rewards (k * batch,) in the order of list(articles) * k."""
    by_article = rewards.reshape(k, -1)                                    # (k, batch): row j = sample j
    mean = by_article.mean(dim=0, keepdim=True)                            # r_mean of each article: (1, batch)
    return ((k * mean - by_article) / (k - 1)).reshape(-1)


SOLUTIONS = {
    "07.1": (self_critical_by_hand, check_self_critical_loss),
    "07.2": (leave_one_out_closed_form, check_leave_one_out),
}
