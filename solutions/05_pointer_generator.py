"""Solutions to notebook 05's checked exercises (the pointer-generator and coverage)."""
import torch

from dca_course.exercises import check_coverage_loss, check_final_distribution


def final_distribution_by_hand(p_vocab, attn, p_gen, src_ext, n_oov):
    """05.1, eq. (9): P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i on V + n_oov columns."""
    generate = p_gen * p_vocab                                             # (batch, V)
    extended = torch.cat([generate, generate.new_zeros(generate.size(0), n_oov)], dim=1)   # (batch, V + n_oov)
    # every source position adds its copy mass to its word's column; a repeated word gets the sum
    return extended.scatter_add(1, src_ext, (1 - p_gen) * attn)


def coverage_loss_by_hand(attn, mask):
    """05.2, eqs. (10) and (12): attn (batch, steps, src_len), mask (batch, steps) -> a scalar."""
    coverage = torch.cumsum(attn, dim=1) - attn                            # c^t: the steps before t only
    per_step = torch.minimum(attn, coverage).sum(-1)                       # (batch, steps)
    mask = mask.to(attn.dtype)
    return (per_step * mask).sum() / mask.sum()                            # the mean over real steps


SOLUTIONS = {
    "05.1": (final_distribution_by_hand, check_final_distribution),
    "05.2": (coverage_loss_by_hand, check_coverage_loss),
}
