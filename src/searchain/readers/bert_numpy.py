"""A NumPy forward pass of a BERT sentence encoder, for embedding a few short queries.

SearChain's query memory embeds a handful of short queries per question. Loading them
through sentence-transformers imports torch (~4.5 s of one core here); run beside the first
LLM call, that import took a core from llama.cpp and slowed its decoding for seconds
(issue 31: measured 37 of 94 tokens at 2-8x their time in ``searchain ask``). This module
computes the same embeddings — BertModel, mean pooling over the attention mask, L2
normalisation, as the packaged all-MiniLM-L6-v2 is configured — from the model's own
``model.safetensors`` and ``tokenizer.json`` in a few milliseconds, importing only NumPy,
``safetensors`` and ``tokenizers``. ``tests/readers/test_bert_numpy.py`` checks it against
sentence-transformers on the same model (cosine 1 - 1e-6). A model directory that is not
this shape raises :class:`UnsupportedModel`, and the caller uses sentence-transformers.

BLAS runs on one thread inside ``encode``: OpenBLAS's workers spin after a call and would
take the core llama.cpp's next batch needs (the reason torch is kept passive elsewhere).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

MAX_BATCH = 32  # texts per forward pass (bounds the activations' memory)


class UnsupportedModel(ValueError):
    """The directory holds a sentence encoder this forward pass does not implement."""


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def check_supported(directory: Path) -> dict[str, Any]:
    """The BERT config of ``directory`` if it is Transformer → mean Pooling → Normalize over
    an absolute-position BertModel with GELU; else :class:`UnsupportedModel` saying why."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in _read_json(directory / "modules.json")]
        config = _read_json(directory / "config.json")
        pooling = _read_json(directory / "1_Pooling" / "config.json")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UnsupportedModel(f"{directory}: not a sentence-transformers directory ({e})") from e
    why = []
    if modules != ["Transformer", "Pooling", "Normalize"]:
        why.append(f"modules {modules}")
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        why.append(f"model_type {config.get('model_type')} / {config.get('hidden_act')}")
    if config.get("position_embedding_type", "absolute") != "absolute":
        why.append("relative position embeddings")
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        why.append(f"pooling {modes}")
    if (
        not (directory / "model.safetensors").is_file()
        or not (directory / "tokenizer.json").is_file()
    ):
        why.append("no model.safetensors or tokenizer.json")
    if why:
        raise UnsupportedModel(f"{directory}: {'; '.join(why)}")
    return config  # type: ignore[no-any-return]


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, below float32's resolution at 1.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = 1.061405429
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = c + t * poly
    poly = t * poly
    return s * (1.0 - poly * np.exp(-a * a))  # type: ignore[no-any-return]


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))  # exact GELU, as BERT's "gelu"


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b  # type: ignore[no-any-return]


class NumpySentenceEncoder:
    """``encode(texts)`` → unit-length float32 rows, as sentence-transformers gives them."""

    def __init__(self, directory: str | Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        config = check_supported(self.directory)
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        st_config = self.directory / "sentence_bert_config.json"
        max_len = _read_json(st_config).get("max_seq_length") if st_config.is_file() else None
        self.max_length = int(max_len or config.get("max_position_embeddings", 512))
        weights = load_file(self.directory / "model.safetensors")
        self.w = {k.removeprefix("bert."): np.ascontiguousarray(v) for k, v in weights.items()}
        self.tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_length)

    def encode(self, texts: list[str]) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        if not texts:
            return np.zeros((0, self.w["embeddings.word_embeddings.weight"].shape[1]), np.float32)
        with threadpool_limits(limits=1, user_api="blas"):
            rows = [self._batch(texts[i : i + MAX_BATCH]) for i in range(0, len(texts), MAX_BATCH)]
        return np.concatenate(rows)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        n = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), n), np.int64)
        mask = np.zeros((len(encs), n), np.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        ln = "embeddings.LayerNorm"
        x = _layer_norm(x, w[ln + ".weight"], w[ln + ".bias"], self.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def _layer(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        w = self.w

        def dense(h: np.ndarray, name: str) -> np.ndarray:
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]  # type: ignore[no-any-return]

        b, n, d = x.shape
        hd = d // self.heads

        def split(h: np.ndarray) -> np.ndarray:
            return h.reshape(b, n, self.heads, hd).transpose(0, 2, 1, 3)

        q = split(dense(x, "attention.self.query"))
        k = split(dense(x, "attention.self.key"))
        v = split(dense(x, "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        att = (scores / scores.sum(-1, keepdims=True)) @ v
        att = att.transpose(0, 2, 1, 3).reshape(b, n, d)
        ln = p + "attention.output.LayerNorm"
        x = _layer_norm(
            dense(att, "attention.output.dense") + x, w[ln + ".weight"], w[ln + ".bias"], self.eps
        )
        h = _gelu(dense(x, "intermediate.dense"))
        ln = p + "output.LayerNorm"
        return _layer_norm(
            dense(h, "output.dense") + x, w[ln + ".weight"], w[ln + ".bias"], self.eps
        )
