"""A small sentence encoder run locally on CPU: BERT's forward pass in numpy over the
model's own safetensors weights and tokenizer.json, mean-pooled and scaled to length 1 (as
sentence-transformers computes all-MiniLM-L6-v2; no torch: ~90 MB of weights, not ~2 GB
of framework).

A model is named in MODELS with the pinned revision it is fetched at and the SHA-256 of
each file read: weights that are not the ones named are refused, whether they came from
the hub, a package or a folder. Texts are encoded in batches of similar length (padding
is most of the cost of mixed lengths), float32 throughout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file
from tokenizers import Tokenizer

FILES = ("config.json", "tokenizer.json", "model.safetensors")
BATCH = 32  # texts per forward pass: ~40 MB of attention scores at 256 tokens


@dataclass(frozen=True)
class Model:
    repo_id: str  # on the Hugging Face hub
    revision: str  # the commit fetched: a name can be moved, a commit cannot
    sha256: dict[str, str]  # FILES → digest
    dimensions: int
    max_tokens: int  # the model's own max_seq_length


MODELS: dict[str, Model] = {
    # sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): 6 layers, 384 dimensions, trained
    # on 1 billion sentence pairs (S2ORC's title–abstract pairs among them).
    "all-MiniLM-L6-v2": Model(
        "sentence-transformers/all-MiniLM-L6-v2", "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
        {"config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
         "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
         "model.safetensors":
             "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
        384, 256),
}


class ModelError(Exception):
    """The model's files are missing, not the named model's, or unreadable."""


def fetch(model: Model) -> Path:
    """The folder holding the model's FILES at its pinned revision, from the Hugging Face
    cache or the hub (the workflow keeps the cache between runs)."""
    from huggingface_hub import snapshot_download  # imported here: only a run with a model needs it
    try:
        return Path(snapshot_download(model.repo_id, revision=model.revision,
                                      allow_patterns=list(FILES)))
    except Exception as exc:
        raise ModelError(f"cannot fetch {model.repo_id}@{model.revision[:12]}: "
                         f"{type(exc).__name__}: {str(exc)[:200]}") from exc


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class Encoder:
    """The model of `folder`, checked against `model`'s digests."""

    def __init__(self, model: Model, folder: Path) -> None:
        for name in FILES:
            path = folder / name
            if not path.is_file():
                raise ModelError(f"{path}: missing")
            if (got := _digest(path)) != model.sha256[name]:
                raise ModelError(f"{path}: SHA-256 {got[:16]}…, not {model.repo_id}'s "
                                 f"{model.sha256[name][:16]}… (revision {model.revision[:12]})")
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            self._heads = int(config["num_attention_heads"])
            self._layers = int(config["num_hidden_layers"])
            self._eps = float(config.get("layer_norm_eps", 1e-12))
            weights = load_file(folder / "model.safetensors")
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # safetensors, tokenizers and json each raise their own
            raise ModelError(f"{folder}: unreadable model: {exc}") from exc
        # Checkpoints name their tensors with or without the "bert." prefix.
        self._w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}
        self.dimensions = model.dimensions
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(model.max_tokens)
        if self._w["embeddings.word_embeddings.weight"].shape[1] != model.dimensions:
            raise ModelError(f"{folder}: not {model.dimensions} dimensions")

    def encode(self, texts: Sequence[str], batch: int = BATCH) -> npt.NDArray[np.float32]:
        """One unit-length row per text, in order."""
        encoded = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dimensions), np.float32)
        order = np.argsort([len(e.ids) for e in encoded], kind="stable")
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            width = max(len(encoded[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.float32)
            for j, i in enumerate(rows):
                ids[j, :len(encoded[i].ids)] = encoded[i].ids
                mask[j, :len(encoded[i].ids)] = 1
            out[rows] = self._forward(ids, mask)
        return out

    def _norm(self, x: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: npt.NDArray[np.float32] = ((x - mean) / np.sqrt(var + self._eps)
                                        * self._w[name + ".weight"] + self._w[name + ".bias"])
        return out

    def _linear(self, x: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
        return x @ self._w[name + ".weight"].T + self._w[name + ".bias"]

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]
                 ) -> npt.NDArray[np.float32]:
        from scipy.special import erf  # here: only a run with a model needs its ~0.2 s import

        w = self._w
        b, t = ids.shape
        x: npt.NDArray[np.float32] = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        h = self._heads
        d = x.shape[-1] // h
        hidden = np.float32(-1e9) * (1 - mask)[:, None, None, :]  # padding gets no attention
        scale = np.float32(1 / np.sqrt(d))
        for layer in range(self._layers):
            a = f"encoder.layer.{layer}."
            q, k, v = (self._linear(x, a + "attention.self." + n).reshape(b, t, h, d)
                       .transpose(0, 2, 1, 3) for n in ("query", "key", "value"))
            s = q @ k.transpose(0, 1, 3, 2) * scale + hidden
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            context = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, h * d)
            x = self._norm(x + self._linear(context, a + "attention.output.dense"),
                           a + "attention.output.LayerNorm")
            inner = self._linear(x, a + "intermediate.dense")
            inner = inner * np.float32(0.5) * (1 + erf(inner * np.float32(1 / np.sqrt(2))))
            x = self._norm(x + self._linear(inner, a + "output.dense"), a + "output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1)[:, None]
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: npt.NDArray[np.float32] = (pooled / np.where(norm > 0, norm, 1)).astype(np.float32)
        return out
