"""Solutions to notebook 05's checked exercises (the pointer-generator and coverage)."""
import torch

from dca_course.exercises import check_coverage_loss, check_final_distribution


def final_distribution_one_hot(p_vocab, attn, p_gen, src_ext, n_oov):
    """05.1, eq. (9) with a one-hot matrix: P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i."""
    width = p_vocab.size(1) + n_oov
    one_hot = torch.nn.functional.one_hot(src_ext, width).to(attn.dtype)     # (batch, src_len, V + n_oov)
    copy = torch.bmm(((1 - p_gen) * attn).unsqueeze(1), one_hot).squeeze(1)  # sum over positions of each word
    generate = torch.cat([p_gen * p_vocab, p_vocab.new_zeros(p_vocab.size(0), n_oov)], dim=1)
    return generate + copy


def coverage_loss_loop(attn, mask):
    """05.2, eqs. (10) and (12) as the decoder keeps them: attn (batch, steps, src_len), mask (batch, steps)."""
    coverage = torch.zeros_like(attn[:, 0])                                # c^0 = 0: (batch, src_len)
    per_step = []
    for t in range(attn.size(1)):
        per_step.append(torch.minimum(attn[:, t], coverage).sum(-1))       # covloss_t, eq. (12)
        coverage = coverage + attn[:, t]                                   # c^{t+1} = c^t + a^t
    per_step = torch.stack(per_step, dim=1)                                # (batch, steps)
    mask = mask.to(attn.dtype)
    return (per_step * mask).sum() / mask.sum()                            # the mean over real steps


SOLUTIONS = {
    "05.1": (final_distribution_one_hot, check_final_distribution),
    "05.2": (coverage_loss_loop, check_coverage_loss),
}
