"""Solutions to notebook 06's checked exercises (Deep Communicating Agents)."""
import torch

from dca_course.exercises import check_agent_distribution, check_agent_messages


def agent_messages_by_hand(last, agent_mask):
    """06.1, eq. (5): the mean of the other non-empty agents' last states.
    last (batch, agents, dim), agent_mask (batch, agents) -> (batch, agents, dim)."""
    m = agent_mask.to(last.dtype).unsqueeze(-1)                            # (batch, agents, 1)
    total = (last * m).sum(dim=1, keepdim=True)                            # all non-empty agents
    others = total - last * m                                              # minus the agent itself
    count = (m.sum(dim=1, keepdim=True) - m).clamp_min(1.0)                # how many others: M - 1
    return others / count                                                  # zero when there is no other


def agent_distribution_by_hand(p_vocab, word_attn, p_gen, agent_attn, src_ext, n_oov):
    """06.2, eqs. (14)-(15): each agent's pointer-generator distribution over the extended vocabulary,
    copying from its own words, mixed by the agent attention. -> (batch, V + n_oov)."""
    B, M, L = word_attn.shape
    generate = p_gen * p_vocab.unsqueeze(1)                                # (batch, agents, V)
    per_agent = torch.cat([generate, generate.new_zeros(B, M, n_oov)], dim=-1)
    per_agent = per_agent.scatter_add(-1, src_ext, (1 - p_gen) * word_attn)   # P^a, eq. (14)
    return (agent_attn.unsqueeze(-1) * per_agent).sum(dim=1)               # sum_a g_a P^a, eq. (15)


SOLUTIONS = {
    "06.1": (agent_messages_by_hand, check_agent_messages),
    "06.2": (agent_distribution_by_hand, check_agent_distribution),
}
