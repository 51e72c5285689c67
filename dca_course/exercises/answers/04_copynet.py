"""Solutions to notebook 04's exercises (try them first: each check names the likely mistake)."""
import torch

from dca_course.exercises import check_copy_scores, check_selective_read


def copy_scores(keys, W_c, s):
    """04.1: psi_c(y_t = x_j) = tanh(h_j^T W_c) s_t, eq. (8): one raw score per source position."""
    return torch.bmm(torch.tanh(W_c(keys)), s.unsqueeze(-1)).squeeze(-1)   # (batch, src_len)


def selective_read(y_prev, prev_copy, src_ext, src_mask, keys):
    """04.2: eq. (9): rho_tj = p(x_j, c) / K on the real positions holding y_{t-1}, else 0; zeta = sum_j rho_tj h_j."""
    weights = prev_copy * ((src_ext == y_prev.unsqueeze(1)) & src_mask)    # (batch, src_len)
    K = weights.sum(dim=1, keepdim=True)
    rho = torch.where(K > 0, weights / K.clamp_min(1e-30), torch.zeros_like(weights))
    return torch.bmm(rho.unsqueeze(1), keys).squeeze(1), rho                # (batch, d), (batch, src_len)


SOLUTIONS = {
    "04.1": (copy_scores, check_copy_scores),
    "04.2": (selective_read, check_selective_read),
}
