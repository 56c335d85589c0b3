"""One decode step of an LLM attention layer, every computation a Loom kernel on the emulated GPU.

Run: python examples/llm_layer.py [position=255]

The layer (LLaMA-shaped, 4 heads of dimension 128, hidden size 512) takes the hidden state ``x`` of the
token at ``position`` and a KV cache holding the keys and values of the ``position`` earlier tokens::

    h    = rms_norm(x) * w_norm                       examples/loom/rms_norm.loom
    qkv  = h @ w_qkv                                  examples/loom/matmul_tiled.loom (1 x 512 @ 512 x 1536)
    q, k = rope(q, position), rope(k, position)       examples/loom/rope.loom (cos/sin tables, llama.cpp's)
    cache[position] = k, v
    a    = attention(q, cache)                        examples/loom/flash_decode.loom (online softmax)
    y    = x + w_out @ a                              examples/loom/matvec_q8_0.loom, then add_f32.loom

The attention runs a second time the long way, as a check of the first: per head the scores
``q . K^T`` (matmul_tiled), a row softmax over all heads (softmax_rows.loom), and the weighted sum of
the values (matmul_tiled). The query weights are scaled by 1/sqrt(128) when the weights are made (as
inference engines fold it), so both paths use the scores unscaled. The output projection's weights are
quantised q8_0-style (int8 blocks of 32 with an f16 scale). Between kernels the arrays pass through host
memory, where NumPy does only the layout glue (splitting qkv into heads, appending to the cache,
transposing a head's keys for the long path).

The result is checked against the same layer in NumPy float64 (with the same quantised weights), and the
two attention paths against each other. Prints the maximum errors, e.g.
``position 255 (KV 256): max |loom - numpy| = 2e-07 (largest |y| 3.7), attention paths differ by 1.3e-07``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from _common import UsageError, parse_int

sys.path.insert(0, str(Path(__file__).resolve().parent / "loom"))
import loom_kernels as lk  # noqa: E402

USAGE = "usage: python llm_layer.py [position=255]"
HEADS, HEAD_DIM = 4, 128
HIDDEN = HEADS * HEAD_DIM
EPS = 1e-5
MAX_POSITION = 4095


def rope_tables(positions: int, dim: int = HEAD_DIM, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of angle[p, i] = p * base^(-2i/dim), as float32 tables (positions x dim/2)."""
    angle = np.arange(positions)[:, None] * base ** (-np.arange(0, dim, 2) / dim)
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)


def make_layer(rng: np.random.Generator, position: int) -> dict[str, np.ndarray]:
    """Random weights, a token's hidden state and a KV cache of `position` earlier tokens."""
    f32 = np.float32
    w_qkv = (rng.standard_normal((HIDDEN, 3 * HIDDEN)) / np.sqrt(HIDDEN)).astype(f32)
    w_qkv[:, :HIDDEN] *= f32(HEAD_DIM ** -0.5)  # the attention scale, folded into the query weights
    w_out = rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)
    # q8_0: per block of 32 weights of a row, d = max|w| / 127 (as f16) and q = round(w / d).
    blocks = w_out.reshape(HIDDEN, HIDDEN // 32, 32)
    d = (np.abs(blocks).max(axis=2) / 127).astype(np.float16)
    q = np.clip(np.rint(blocks / d.astype(np.float64)[..., None]), -127, 127).astype(np.int8).reshape(HIDDEN, HIDDEN)
    cos_t, sin_t = rope_tables(position + 1)
    return {
        "x": rng.standard_normal(HIDDEN).astype(f32),
        "w_norm": (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(f32),
        "w_qkv": w_qkv, "w_out_q": q, "w_out_d": d, "cos": cos_t, "sin": sin_t,
        "k_cache": rng.standard_normal((HEADS, position + 1, HEAD_DIM)).astype(f32),
        "v_cache": rng.standard_normal((HEADS, position + 1, HEAD_DIM)).astype(f32),
    }


def loom_layer(p: dict[str, np.ndarray], position: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layer with the Loom kernels: (y, the flash-decode attention, the softmax-path attention)."""
    f32 = np.float32
    kv = position + 1
    h, = lk.run("rms_norm", {"rows": 1, "cols": HIDDEN, "eps": EPS},
                [p["x"].reshape(1, HIDDEN), p["w_norm"], np.empty((1, HIDDEN), f32)], [2])
    qkv, = lk.run("matmul_tiled", {"m": 1, "n": 3 * HIDDEN, "k": HIDDEN},
                  [h, p["w_qkv"], np.empty((1, 3 * HIDDEN), f32)], [2])
    q, k, v = (part.reshape(1, HEADS, HEAD_DIM) for part in np.split(qkv[0], 3))
    rope = {"tokens": 1, "heads": HEADS, "dim": HEAD_DIM, "pos0": position}
    q, = lk.run("rope", rope, [q, p["cos"], p["sin"], np.empty_like(q)], [3])
    k, = lk.run("rope", rope, [k, p["cos"], p["sin"], np.empty_like(k)], [3])
    k_cache, v_cache = p["k_cache"].copy(), p["v_cache"].copy()
    k_cache[:, position], v_cache[:, position] = k[0], v[0]
    attn, = lk.run("flash_decode", {"heads": HEADS, "kv_len": kv, "scale": 1.0},
                   [q[0], k_cache, v_cache, np.empty((HEADS, HEAD_DIM), f32)], [3])
    # The long way: scores per head, one softmax over all heads' rows, then the weighted values.
    scores = np.empty((HEADS, kv), f32)
    for head in range(HEADS):
        scores[head], = lk.run("matmul_tiled", {"m": 1, "n": kv, "k": HEAD_DIM},
                               [q[0, head][None], np.ascontiguousarray(k_cache[head].T), np.empty((1, kv), f32)], [2])
    probs, = lk.run("softmax_rows", {"rows": HEADS, "cols": kv}, [scores, np.empty_like(scores)], [1])
    attn_long = np.empty((HEADS, HEAD_DIM), f32)
    for head in range(HEADS):
        attn_long[head], = lk.run("matmul_tiled", {"m": 1, "n": HEAD_DIM, "k": kv},
                                  [probs[head][None], v_cache[head], np.empty((1, HEAD_DIM), f32)], [2])
    proj, = lk.run("matvec_q8_0", {"rows": HIDDEN, "cols": HIDDEN},
                   [p["w_out_q"], p["w_out_d"], attn.reshape(HIDDEN), np.empty(HIDDEN, f32)], [3])
    y, = lk.run("add_f32", {"count": HIDDEN}, [p["x"], proj, np.empty(HIDDEN, f32)], [2])
    return y, attn, attn_long


def numpy_layer(p: dict[str, np.ndarray], position: int) -> np.ndarray:
    """The same layer in NumPy float64 (same float32 inputs, the same quantised output weights)."""
    x = p["x"].astype(np.float64)
    h = x / np.sqrt(np.mean(x * x) + np.float32(EPS)) * p["w_norm"]
    q, k, v = (part.reshape(HEADS, HEAD_DIM) for part in np.split(h @ p["w_qkv"], 3))
    c, s = p["cos"][position], p["sin"][position]

    def rope(t: np.ndarray) -> np.ndarray:
        out = np.empty_like(t)
        out[:, 0::2] = t[:, 0::2] * c - t[:, 1::2] * s
        out[:, 1::2] = t[:, 0::2] * s + t[:, 1::2] * c
        return out
    q, k = rope(q), rope(k)
    keys, values = p["k_cache"].astype(np.float64), p["v_cache"].astype(np.float64)
    keys[:, position], values[:, position] = k, v
    scores = np.einsum("hd,htd->ht", q, keys)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    attn = np.einsum("ht,htd->hd", w / w.sum(axis=1, keepdims=True), values)
    w_out = (p["w_out_q"].reshape(HIDDEN, -1, 32) * p["w_out_d"].astype(np.float64)[..., None]).reshape(HIDDEN, HIDDEN)
    y: np.ndarray = x + w_out @ attn.reshape(HIDDEN)
    return y


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        if len(argv) > 2:
            raise UsageError(f"expected at most one argument, got {len(argv) - 1}")
        position = parse_int(argv[1]) if len(argv) > 1 else 255
        if position > MAX_POSITION:
            raise UsageError(f"position must be in 0..={MAX_POSITION}")
    except UsageError as e:
        print(f"error: {e}\n{USAGE}", file=sys.stderr)
        return 2

    params = make_layer(np.random.default_rng(25), position)
    y, attn, attn_long = loom_layer(params, position)
    want = numpy_layer(params, position)
    err = float(np.abs(y - want).max())
    paths = float(np.abs(attn - attn_long).max())
    # float32 throughout with sums of at most 4096 terms: both errors stay far below 1e-4 of the values.
    assert err <= 1e-4 * np.abs(want).max(), f"Loom layer differs from NumPy by {err}"
    assert paths <= 1e-4 * np.abs(attn).max(), f"the two attention paths differ by {paths}"
    print(f"position {position} (KV {position + 1}): max |loom - numpy| = {err:.2g} "
          f"(largest |y| {np.abs(want).max():.2g}), attention paths differ by {paths:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
