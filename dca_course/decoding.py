"""Decoding: greedy search, sampling and beam search over the extended vocabulary (teacher forcing,
the models' forward pass, is :mod:`dca_course.models.teacher_forcing`).

Every decoder of the course speaks one protocol (see :mod:`dca_course.models`):

* ``state = model.encode(batch)``: a dict of tensors whose first dimension is the batch;
* ``log_probs, state, info = model.step(y_prev, state)``: one step; ``log_probs`` is
  (batch, width) with width V, or V + n_oov for a copying model, ``info`` holds per-step
  tensors to look inside (attention, p_gen...).  ``y_prev`` (batch,) holds the previous
  words: for a model with ``extended_vocab = True`` (CopyNet, the pointer-generator) the
  *extended* ids the search chose, which the model maps to UNK itself before its embedding
  (CopyNet's selective read must know which OOV word it copied); for any other model, ids
  the embedding can read (:func:`decoder_input` does the choice).

Because the state is a dict of batch-first tensors, a search can reorder or repeat
hypotheses with one ``index_select`` per entry, whatever the model keeps in it.

A batch's extended vocabulary is as wide as its *widest* example: V + the largest number of
OOV words of any article in it.  For an article with fewer OOV words the columns after its own
are no word at all; the model gives them (almost) no probability, and every search here also
sets their log-probability to -inf (:func:`mask_impossible`, from the state's ``oov_mask``), so
that no search, sampling temperature or length bonus can ever choose one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .data.vocab import extended_to_vocab


@dataclass
class Decoded:
    ids: list                     # per example: list of output ids (extended), without </s>
    info: dict = field(default_factory=dict)   # name -> (batch, steps, ...) tensor
    log_probs: torch.Tensor | None = None      # (batch, steps) log-prob of each chosen id
    scores: torch.Tensor | None = None         # (batch,) beam search: the best hypothesis's score


def decoder_input(model, ids: torch.Tensor) -> torch.Tensor:
    """What ``model.step`` is fed: extended ids for a copying model, readable ids otherwise (a
    copied OOV word is fed back as UNK)."""
    if getattr(model, "extended_vocab", False):
        return ids
    return extended_to_vocab(ids, model.vocab_size, getattr(model, "unk_id", 1))


# -- searches -------------------------------------------------------------------------------------


def mask_impossible(log_probs: torch.Tensor, state: dict) -> torch.Tensor:
    """``log_probs`` (rows, V + n_oov) with -inf on the columns no word of the row's article fills.

    Column V + j is the j-th OOV word of the row's own article; a copying model's state holds
    ``oov_mask`` (rows, n_oov), True where that word exists
    (:func:`~dca_course.nn.copying.oov_slots`).  Ids at or beyond V + the row's OOV
    count are impossible.  A state without ``oov_mask`` (a model that cannot copy) is left as is.
    """
    oov_mask = state.get("oov_mask") if isinstance(state, dict) else None
    if oov_mask is None or oov_mask.numel() == 0:      # shapes only: no device sync in a decode step
        return log_probs
    n_oov = oov_mask.size(-1)
    width = log_probs.size(-1)
    impossible = torch.cat([oov_mask.new_zeros(oov_mask.shape[:-1] + (width - n_oov,)), ~oov_mask], dim=-1)
    return log_probs.masked_fill(impossible, float("-inf"))


@torch.no_grad()
def greedy(model, batch, max_len: int = 50, *, bos_id: int = 2, eos_id: int = 3) -> Decoded:
    """Pick the most probable word at every step, until ``</s>`` or ``max_len``."""
    return _decode(model, batch, max_len, bos_id, eos_id, sample=False)


def sample(model, batch, max_len: int = 50, *, bos_id: int = 2, eos_id: int = 3,
           generator: torch.Generator | None = None, temperature: float = 1.0, grad: bool = False) -> Decoded:
    """Draw each word from the model's distribution (``grad=True`` keeps the graph, for RL)."""
    with torch.set_grad_enabled(grad):
        return _decode(model, batch, max_len, bos_id, eos_id, sample=True, generator=generator,
                       temperature=temperature)


def _decode(model, batch, max_len, bos_id, eos_id, *, sample, generator=None, temperature=1.0) -> Decoded:
    state = model.encode(batch)
    B = batch.src.size(0)
    device = batch.src.device
    y = torch.full((B,), bos_id, dtype=torch.long, device=device)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    chosen, chosen_lp, infos = [], [], {}
    for _ in range(max_len):
        log_probs, state, info = model.step(decoder_input(model, y), state)
        log_probs = mask_impossible(log_probs, state)        # ids beyond this article's OOV words
        if sample:
            probs = torch.softmax(log_probs / temperature, dim=-1)
            y = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        else:
            y = log_probs.argmax(dim=-1)
        y = torch.where(done, torch.full_like(y, eos_id), y)
        chosen.append(y)
        chosen_lp.append(log_probs.gather(-1, y.unsqueeze(-1)).squeeze(-1) * (~done))
        for k, v in info.items():
            infos.setdefault(k, []).append(v)
        done = done | (y == eos_id)
        if bool(done.all()):
            break
    ids = torch.stack(chosen, dim=1)
    out = []
    for row in ids.tolist():
        out.append(row[: row.index(eos_id)] if eos_id in row else row)
    return Decoded(out, {k: torch.stack(v, dim=1) for k, v in infos.items()}, torch.stack(chosen_lp, 1))


# -- beam search -------------------------------------------------------------------------------
#
# The search (See et al. 2017's decoder, batched):
#   * each example starts from ONE hypothesis, <s> with score 0 (the other K-1 beams hold -inf,
#     so the first step expands only the real one);
#   * at every step each alive hypothesis is extended by every word; of the K * width
#     candidates of an example the 2K best (by summed log-probability) are taken in order:
#     a candidate ending in </s> becomes a finished hypothesis, any other an alive one, until
#     K are alive (or K have finished);
#   * an example stops once K hypotheses have finished, or after ``max_len`` steps; its result
#     is the finished hypothesis with the best score / length ** length_penalty (if none
#     finished, the best alive one);
#   * </s> cannot be chosen before ``min_len`` words; with ``block_ngram_repeat=n`` a word that
#     would repeat an n-gram of the hypothesis is forbidden (off by default); an id beyond the
#     example's own OOV words is never chosen (:func:`mask_impossible`).
#
# The length of a hypothesis counts its words and its </s> (not <s>); length_penalty=1 ranks
# by the mean log-probability per word, and 0 by the plain sum.  See et al.'s code divides by
# the number of its hypothesis's tokens, which start with <s>: one more; ``count_bos=True``
# ranks exactly as it does (it can prefer a shorter summary a little less often).


def _normalised(score: float, length: int, length_penalty: float) -> float:
    return score / (max(length, 1) ** length_penalty) if length_penalty else score


def _banned(seq: list, n: int) -> set:
    """Words that would complete an n-gram already in ``seq``."""
    if n <= 0 or len(seq) < n - 1:
        return set()
    prefix = tuple(seq[len(seq) - n + 1:]) if n > 1 else ()
    return {seq[i + n - 1] for i in range(len(seq) - n + 1) if tuple(seq[i: i + n - 1]) == prefix}


@torch.no_grad()
def beam_search(model, batch, beam_size: int = 4, *, max_len: int = 100, min_len: int = 0,
                length_penalty: float = 1.0, block_ngram_repeat: int = 0, bos_id: int = 2,
                eos_id: int = 3, return_info: bool = False, count_bos: bool = False) -> Decoded:
    """Beam search over the whole batch at once (every example's K beams in one tensor).

    The decoding state of all hypotheses lives in tensors of shape (batch * beam, ...); after
    each step every state entry is reordered with one ``index_select`` (so a copying model's
    source ids, OOV slots, coverage and copy probabilities follow their hypothesis), and the
    examples that have finished are dropped from the tensors.  Returns :class:`Decoded` with the
    best hypothesis of each example (extended ids, without </s>), ``scores`` (batch,) its
    length-normalised score, and with ``return_info=True`` the step info of that hypothesis
    (name -> (batch, steps, ...), zero-padded).  :func:`beam_search_one_by_one` is the same
    search one example at a time.
    """
    K = beam_size
    B = batch.src.size(0)
    dev = batch.src.device
    extra = int(count_bos)                            # <s> in the length, as See et al.'s code
    state = model.encode(batch)
    rows = torch.arange(B, device=dev).repeat_interleave(K)
    state = {k: v.index_select(0, rows) for k, v in state.items()}
    scores = torch.full((B, K), float("-inf"), device=dev)
    scores[:, 0] = 0.0
    y = torch.full((B * K,), bos_id, dtype=torch.long, device=dev)
    active = torch.arange(B, device=dev)              # the examples still searching
    active_list = list(range(B))
    hist_tok = torch.zeros(max_len, B, K, dtype=torch.long, device=dev)
    hist_par = torch.zeros(max_len, B, K, dtype=torch.long, device=dev)
    hist_info: dict = {}
    finished: list[list] = [[] for _ in range(B)]     # (score, step of </s>, parent beam)
    fin_count = torch.zeros(B, dtype=torch.long, device=dev)
    seqs = [[] for _ in range(B * K)] if block_ngram_repeat else None
    last_step = [max_len - 1] * B
    final_scores: dict = {}
    for t in range(max_len):
        n = active.numel()
        log_probs, state, info = model.step(decoder_input(model, y), state)
        log_probs = mask_impossible(log_probs, state)        # ids beyond each article's OOV words
        W = log_probs.size(-1)
        lp = log_probs.view(n, K, W).clone()
        if t < min_len:
            lp[..., eos_id] = float("-inf")
        if seqs is not None:
            for r, seq in enumerate(seqs):
                for w in _banned(seq, block_ngram_repeat):
                    lp[r // K, r % K, w] = float("-inf")
        cand = (scores.unsqueeze(-1) + lp).view(n, K * W)
        top_s, top_i = cand.topk(2 * K, dim=1)                            # (n, 2K), best first
        beam, tok = top_i // W, top_i % W
        is_eos = tok == eos_id
        not_eos = (~is_eos).long()
        considered = (not_eos.cumsum(1) - not_eos) < K                  # before the K-th alive
        accept = is_eos & considered & torch.isfinite(top_s)
        accept &= (fin_count[active].unsqueeze(1) + accept.long().cumsum(1)) <= K
        order = torch.argsort(is_eos.to(torch.int8), dim=1, stable=True)[:, :K]   # first K alive
        new_scores, new_beam, new_tok = top_s.gather(1, order), beam.gather(1, order), tok.gather(1, order)
        hist_tok[t, active] = new_tok
        hist_par[t, active] = new_beam
        if return_info:
            for k, v in info.items():
                if k not in hist_info:
                    hist_info[k] = v.new_zeros((max_len, B, K) + tuple(v.shape[1:]))
                hist_info[k][t, active] = v.view((n, K) + tuple(v.shape[1:]))
        n_acc = accept.sum(1)
        if bool(n_acc.any()):
            for i, c in accept.nonzero().tolist():
                finished[active_list[i]].append((float(top_s[i, c]), t, int(beam[i, c])))
            fin_count[active] += n_acc
        done = fin_count[active] >= K
        if t == max_len - 1:
            for i, b in enumerate(active_list):
                final_scores[b] = new_scores[i].tolist()
            break
        keep = (~done).nonzero().squeeze(1)
        if keep.numel() < n:
            for i in (done.nonzero().squeeze(1)).tolist():
                last_step[active_list[i]] = t
            active_list = [active_list[i] for i in keep.tolist()]
            active, new_scores, new_beam, new_tok = active[keep], new_scores[keep], new_beam[keep], new_tok[keep]
        else:
            keep = torch.arange(n, device=dev)
        if not active_list:
            break
        rows = (keep.unsqueeze(1) * K + new_beam).view(-1)                # parents' rows
        state = {k: v.index_select(0, rows) for k, v in state.items()}
        if seqs is not None:
            seqs = [seqs[r] + [w] for r, w in zip(rows.tolist(), new_tok.view(-1).tolist())]
        scores, y = new_scores, new_tok.view(-1)

    # Trace the best hypothesis of every example back through the parent pointers.
    hist_tok, hist_par = hist_tok.cpu(), hist_par.cpu()
    ids, best_scores, info_rows = [], [], []
    for b in range(B):
        if finished[b]:
            options = [(_normalised(s, t + 1 + extra, length_penalty), t, p, True) for s, t, p in finished[b]]
        else:
            t_last = last_step[b]
            options = [(_normalised(s, t_last + 1 + extra, length_penalty), t_last, k, False)
                       for k, s in enumerate(final_scores.get(b, [])) if s != float("-inf")]
        best = max(options, key=lambda o: o[0])   # first of equals: the earliest found
        norm, t_end, k, ended = best
        toks, rows_b = [], []
        if ended:
            rows_b.append((t_end, k))
            s = t_end - 1
        else:
            s = t_end
        while s >= 0:
            toks.append(int(hist_tok[s, b, k]))
            par = int(hist_par[s, b, k])
            rows_b.append((s, par))
            k = par
            s -= 1
        ids.append(toks[::-1])
        best_scores.append(norm)
        info_rows.append(sorted(rows_b))
    infos = {}
    if return_info:
        steps = max((len(r) for r in info_rows), default=0)
        for name, hist in hist_info.items():
            out = hist.new_zeros((B, steps) + tuple(hist.shape[3:]))
            for b, rows_b in enumerate(info_rows):
                for j, (s, k) in enumerate(rows_b):
                    out[b, j] = hist[s, b, k]
            infos[name] = out
    return Decoded(ids, infos, None, torch.tensor(best_scores, dtype=torch.float64))


def select_example(batch, i: int):
    """Example ``i`` of a :class:`~dca_course.data.batching.Seq2SeqBatch` as a batch of one,
    with its own padding removed (source and target cut to its length, its own OOV list)."""
    from dataclasses import replace

    if hasattr(batch, "select"):
        return batch.select(i)
    n_src = int(batch.src_mask[i].sum())
    n_tgt = int(batch.tgt_mask[i].sum())
    return replace(batch, src=batch.src[i: i + 1, :n_src], src_ext=batch.src_ext[i: i + 1, :n_src],
                   src_mask=batch.src_mask[i: i + 1, :n_src], tgt_in=batch.tgt_in[i: i + 1, :n_tgt],
                   tgt_out=batch.tgt_out[i: i + 1, :n_tgt], tgt_mask=batch.tgt_mask[i: i + 1, :n_tgt],
                   oovs=[batch.oovs[i]], examples=list(batch.examples[i: i + 1]))


@dataclass
class _Hyp:
    tokens: list
    score: float
    row: int                       # its row in the state of the step that made it
    steps: list                    # per step: info tensors of the row that produced the word


@torch.no_grad()
def beam_search_one_by_one(model, batch, beam_size: int = 4, *, max_len: int = 100, min_len: int = 0,
                           length_penalty: float = 1.0, block_ngram_repeat: int = 0, bos_id: int = 2,
                           eos_id: int = 3, return_info: bool = False, count_bos: bool = False) -> Decoded:
    """The same search as :func:`beam_search`, written plainly: one example at a time, its
    hypotheses in a Python list (See et al.'s reference decoder).  The reference in tests and
    benchmarks; slow."""
    K = beam_size
    extra = int(count_bos)
    ids, best_scores, infos = [], [], []
    for i in range(batch.src.size(0)):
        one = select_example(batch, i)
        state = model.encode(one)
        hyps = [_Hyp([], 0.0, 0, [])]
        results = []
        for t in range(max_len):
            rows = torch.tensor([h.row for h in hyps], device=one.src.device)
            state = {k: v.index_select(0, rows) for k, v in state.items()}
            y = torch.tensor([h.tokens[-1] if h.tokens else bos_id for h in hyps], device=one.src.device)
            log_probs, state, info = model.step(decoder_input(model, y), state)
            W = log_probs.size(-1)
            lp = mask_impossible(log_probs, state).clone()
            if t < min_len:
                lp[:, eos_id] = float("-inf")
            for r, h in enumerate(hyps):
                for w in _banned(h.tokens, block_ngram_repeat):
                    lp[r, w] = float("-inf")
            prev = torch.tensor([h.score for h in hyps], dtype=lp.dtype, device=lp.device)
            cand = (prev.unsqueeze(1) + lp).view(-1)
            top_s, top_i = cand.topk(min(2 * K, cand.numel()))
            new_hyps = []
            for s, idx in zip(top_s.tolist(), top_i.tolist()):
                r, w = divmod(idx, W)
                h = hyps[r]
                steps = h.steps + [{k: v[r] for k, v in info.items()}] if return_info else []
                if w == eos_id:
                    if s != float("-inf"):
                        results.append((_normalised(s, len(h.tokens) + 1 + extra, length_penalty), h.tokens, steps))
                else:
                    new_hyps.append(_Hyp(h.tokens + [w], s, r, steps))
                if len(new_hyps) == K or len(results) == K:
                    break
            hyps = new_hyps
            if len(results) >= K or not hyps:
                break
        if not results:
            results = [(_normalised(h.score, len(h.tokens) + extra, length_penalty), h.tokens, h.steps)
                       for h in hyps if h.score != float("-inf")]
        best = max(results, key=lambda r: r[0])
        ids.append(list(best[1]))
        best_scores.append(best[0])
        infos.append(best[2])
    out = {}
    if return_info and infos:
        steps = max(len(s) for s in infos)
        for name in infos[0][0] if infos[0] else []:
            shapes = [s[0][name].shape for s in infos if s]
            width = tuple(max(d) for d in zip(*shapes))
            ref = infos[0][0][name]
            t = ref.new_zeros((len(infos), steps) + width)
            for b, s in enumerate(infos):
                for j, step in enumerate(s):
                    v = step[name]
                    t[(b, j) + tuple(slice(0, d) for d in v.shape)] = v
            out[name] = t
    return Decoded(ids, out, None, torch.tensor(best_scores, dtype=torch.float64))
