"""Solutions to notebook 02's exercises (try them first: each check names the likely mistake)."""
import torch

from dca_course.exercises import check_attention, check_teacher_forcing


def dot_attention(query, keys, mask):
    """02.1: e_j = query . h_j, a masked softmax over the real positions, the weighted sum of the keys."""
    scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)                 # (batch, src_len)
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)         # padding: exp underflows to 0
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)           # an all-padding row: zeros
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)                # (batch, key_size)
    return context, weights


def teacher_forced(model, batch):
    """02.2: run the decoder step along the reference inputs tgt_in, carrying the state."""
    state = model.encode(batch)
    steps = []
    for t in range(batch.tgt_in.size(1)):
        log_probs, state, _ = model.step(batch.tgt_in[:, t], state)          # y_{t-1} is the reference
        steps.append(log_probs)                                                # (batch, V)
    return torch.stack(steps, dim=1)                                           # (batch, tgt_len, V)


SOLUTIONS = {
    "02.1": (dot_attention, check_attention),
    "02.2": (teacher_forced, check_teacher_forcing),
}
