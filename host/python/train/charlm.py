# SPDX-License-Identifier: BSD-3-Clause
"""A small GPT-style character-level language model, cut into pipeline
pieces, its data, and a single-process reference run.

Pieces: "embed" (token + position embedding), "block0".."block{L-1}"
(torch.nn.TransformerEncoderLayer, pre-norm, GELU, no dropout, with a causal
mask: GPT-style decoder blocks), "head" (final LayerNorm + linear to the
vocabulary). Stage s of S owns a contiguous run of pieces (embed in stage 0,
head in stage S-1, the blocks spread evenly). Every process builds the whole
model from the same seed and keeps its pieces, so that all processes start
from the same parameters as the reference.

Data: the characters of a text file (default the GPL-3 text Debian ships);
micro-batch m of iteration i is ``mb`` random windows of ``seq`` + 1
characters drawn from a generator seeded with (seed, i, m).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_TEXT = "/usr/share/common-licenses/GPL-3"


class Config:
    def __init__(self, text=DEFAULT_TEXT, dim=64, heads=4, layers=4, seq=64, mb=4, micro=4,
                 lr=3e-3, seed=1234):
        self.text, self.dim, self.heads, self.layers = text, dim, heads, layers
        self.seq, self.mb, self.micro, self.lr, self.seed = seq, mb, micro, lr, seed

    def as_dict(self):
        return dict(self.__dict__)


class Data:
    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read().decode("utf-8", errors="replace")
        self.chars = sorted(set(raw))
        idx = {c: i for i, c in enumerate(self.chars)}
        self.ids = torch.tensor([idx[c] for c in raw], dtype=torch.int64)
        self.vocab = len(self.chars)

    def micro_batch(self, cfg, it, m):
        """(inputs, targets), both (mb, seq) int64, for micro-batch m of
        iteration it."""
        g = torch.Generator().manual_seed(cfg.seed * 1000003 + it * 1009 + m)
        off = torch.randint(0, len(self.ids) - cfg.seq - 1, (cfg.mb,), generator=g)
        x = torch.stack([self.ids[o:o + cfg.seq] for o in off.tolist()])
        y = torch.stack([self.ids[o + 1:o + cfg.seq + 1] for o in off.tolist()])
        return x, y


class Embed(nn.Module):
    def __init__(self, vocab, dim, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)

    def forward(self, x):
        return self.tok(x) + self.pos(torch.arange(x.shape[1], device=x.device))


class Block(nn.Module):
    """A GPT block: pre-norm self-attention under a causal mask + MLP."""

    def __init__(self, dim, heads, seq):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim, dropout=0.0,
                                                activation="gelu", batch_first=True,
                                                norm_first=True)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1),
                             persistent=False)

    def forward(self, x):
        return self.layer(x, src_mask=self.mask[:x.shape[1], :x.shape[1]])


class Head(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x):
        return self.out(self.ln(x))


def loss_fn(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def build_pieces(cfg, vocab):
    """All pieces, in order, as (name, module), initialised from cfg.seed."""
    torch.manual_seed(cfg.seed)
    pieces = [("embed", Embed(vocab, cfg.dim, cfg.seq))]
    pieces += [(f"block{i}", Block(cfg.dim, cfg.heads, cfg.seq)) for i in range(cfg.layers)]
    pieces.append(("head", Head(vocab, cfg.dim)))
    return pieces


def stage_pieces(cfg, stages):
    """Names of the pieces of each stage: blocks spread evenly (the later
    stages take the remainder), embed in stage 0, head in the last."""
    if cfg.layers < stages:
        raise ValueError(f"{cfg.layers} layers cannot fill {stages} stages")
    per, extra = divmod(cfg.layers, stages)
    out, b = [], 0
    for s in range(stages):
        n = per + (1 if s >= stages - extra else 0)
        names = ([f"block{i}" for i in range(b, b + n)])
        b += n
        if s == 0:
            names = ["embed"] + names
        if s == stages - 1:
            names = names + ["head"]
        out.append(names)
    return out


class Part(nn.Module):
    """The pieces of one stage, run in order."""

    def __init__(self, named):
        super().__init__()
        self.names = [n for n, _ in named]
        self.pieces = nn.ModuleDict(named)

    def forward(self, x):
        for n in self.names:
            x = self.pieces[n](x)
        return x

    def flat_state(self):
        """{piece.param: tensor} with model-wide names."""
        return {f"{k}": v.detach().to("cpu", copy=True)
                for k, v in self.pieces.state_dict().items()}


def optimizer(cfg, params):
    # foreach=False: the single-tensor path, the same arithmetic for a
    # parameter whichever process owns it
    return torch.optim.AdamW(params, lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.01,
                             foreach=False)


def reference(cfg, data, iters, device="cpu"):
    """One process, the whole model, the same micro-batches in the same
    accumulation order (m = 0..M-1 each iteration), on @p device. Returns
    (losses per iteration, {param name: CPU tensor})."""
    full = Part(build_pieces(cfg, data.vocab)).to(device)
    opt = optimizer(cfg, full.parameters())
    losses = []
    for it in range(iters):
        parts = []
        for m in range(cfg.micro):
            x, y = data.micro_batch(cfg, it, m)
            x, y = x.to(device), y.to(device)
            loss = loss_fn(full(x), y) / cfg.micro
            loss.backward()
            parts.append(loss.detach())
        losses.append(float(torch.stack(parts).sum()))
        opt.step()
        opt.zero_grad(set_to_none=True)
    return losses, full.flat_state()
