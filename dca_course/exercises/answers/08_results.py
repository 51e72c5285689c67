"""Solutions to notebook 08's checked exercises (reading the results)."""
import math

from dca_course.exercises import check_rouge_l, check_seed_spread


def seed_spread_by_hand(values):
    """08.1: (mean, sample standard deviation) of a metric over seeds."""
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)              # n - 1: a sample of seeds
    return mean, math.sqrt(variance)


def rouge_l_by_hand(prediction, reference):
    """08.2: ROUGE-L F1 of two lists of words, from their longest common subsequence."""
    if not prediction or not reference:
        return 0.0
    # lcs[i][j]: the LCS of prediction[:i] and reference[:j]
    lcs = [[0] * (len(reference) + 1) for _ in range(len(prediction) + 1)]
    for i, p in enumerate(prediction, 1):
        for j, r in enumerate(reference, 1):
            lcs[i][j] = lcs[i - 1][j - 1] + 1 if p == r else max(lcs[i - 1][j], lcs[i][j - 1])
    common = lcs[-1][-1]
    if common == 0:
        return 0.0
    precision, recall = common / len(prediction), common / len(reference)
    return 2 * precision * recall / (precision + recall)


SOLUTIONS = {
    "08.1": (seed_spread_by_hand, check_seed_spread),
    "08.2": (rouge_l_by_hand, check_rouge_l),
}
