"""A tiny model in all-MiniLM-L6-v2's format, for tests that need the encoder to run but
not to be good: random BERT weights written with safetensors, a WordPiece tokenizer.json
built with the tokenizers library over a small vocabulary, and the config.json the
encoder reads. No download; the real model serves the benchmarks."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece

from pipeline.derive import encoder

HIDDEN, HEADS, LAYERS, INNER, POSITIONS = 32, 4, 2, 64, 512
WORDS = ["the", "a", "of", "and", "to", "in", "for", "with", "on", "we", "model", "models",
         "language", "learning", "data", "image", "video", "diffusion", "agent", "agents",
         "code", "attack", "attacks", "jailbreak", "segmentation", "medical", "graph",
         "network", "training", "reasoning", "policy", "reward"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS,
         *"abcdefghijklmnopqrstuvwxyz0123456789.,:;-", *(f"##{c}" for c in
                                                          "abcdefghijklmnopqrstuvwxyz0123456789")]


def write(folder: Path, seed: int = 0) -> encoder.Model:
    """The tiny model's files in `folder`, and a Model naming their digests."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": normal(len(VOCAB), HIDDEN),
               "embeddings.position_embeddings.weight": normal(POSITIONS, HIDDEN),
               "embeddings.token_type_embeddings.weight": normal(2, HIDDEN),
               "embeddings.LayerNorm.weight": np.ones(HIDDEN, np.float32),
               "embeddings.LayerNorm.bias": np.zeros(HIDDEN, np.float32)}
    for layer in range(LAYERS):
        a = f"encoder.layer.{layer}."
        for name, rows, cols in (("attention.self.query", HIDDEN, HIDDEN),
                                 ("attention.self.key", HIDDEN, HIDDEN),
                                 ("attention.self.value", HIDDEN, HIDDEN),
                                 ("attention.output.dense", HIDDEN, HIDDEN),
                                 ("intermediate.dense", INNER, HIDDEN),
                                 ("output.dense", HIDDEN, INNER)):
            tensors[a + name + ".weight"] = normal(rows, cols)
            tensors[a + name + ".bias"] = normal(rows)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[a + norm + ".weight"] = np.ones(HIDDEN, np.float32)
            tensors[a + norm + ".bias"] = np.zeros(HIDDEN, np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    tokenizer = Tokenizer(WordPiece({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({
        "hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
        "intermediate_size": INNER, "layer_norm_eps": 1e-12}), encoding="utf-8")
    return dataclasses.replace(
        encoder.MODELS["all-MiniLM-L6-v2"], dimensions=HIDDEN,
        sha256={name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
                for name in encoder.FILES})
