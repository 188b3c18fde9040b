"""Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint, read defensively.

The answer comes from a server we do not control: it is parsed here, not by the openai
package (which raises arbitrary errors on a body of another shape), and a batch is kept
only when it holds one finite vector of the asked length per text, in order. The first
failure ends the fetch; what came before it is kept.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from pipeline import outbound
from pipeline.config import Config
from pipeline.text.untrusted import clean_text

BATCH = 64  # texts per request: ~20,000 tokens of title and abstract


@dataclass
class Fetched:
    vectors: list[np.ndarray] = field(default_factory=list)  # for the first texts, in order
    error: str | None = None  # why the rest are missing


def fetch(cfg: Config, api_key: str, texts: Sequence[str]) -> Fetched:
    """Unit-length vectors for `texts`, BATCH at a time, until all are done or one fails."""
    # Async for its whole-request deadline (pipeline.outbound), in a thread of its own: the
    # caller's may have an event loop running (Playwright's does, in the tests).
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _fetch(cfg, api_key, texts)).result()


async def _fetch(cfg: Config, api_key: str, texts: Sequence[str]) -> Fetched:
    import openai  # here: it takes ~1 s to import, which every reader of this module would pay

    s, d = cfg.similar, cfg.digest
    out = Fetched()
    async with openai.AsyncOpenAI(base_url=d.base_url, api_key=api_key,
                                  timeout=d.timeout_seconds, max_retries=d.max_retries,
                                  http_client=outbound.model_client(d.timeout_seconds)) as client:
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start:start + BATCH])
            try:
                raw = await client.embeddings.with_raw_response.create(
                    model=s.embeddings_model, input=batch, dimensions=s.embeddings_dimensions,
                    encoding_format="float")
            except openai.OpenAIError as exc:
                out.error = clean_text(f"{type(exc).__name__}: {exc}")[:300]  # the server's words
                return out
            vectors, problem = parse(raw.content, len(batch), s.embeddings_dimensions)
            if vectors is None:
                out.error = f"the server's answer is unusable: {problem}"
                return out
            out.vectors += vectors
    return out


def parse(body: bytes, count: int, dimensions: int) -> tuple[list[np.ndarray] | None, str]:
    """The answer's vectors in input order, scaled to length 1; or None and why."""
    try:
        data = json.loads(body)
    except ValueError:
        return None, "not JSON"
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        return None, f"expected {count} embeddings"
    found: dict[int, list[object]] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not isinstance(vector, list):
            return None, "an item without index and embedding"
        found[index] = vector
    if sorted(found) != list(range(count)):
        return None, "indices are not 0 … n-1"
    out = []
    for i in range(count):
        vector = found[i]
        if len(vector) != dimensions or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            return None, f"an embedding is not {dimensions} finite numbers"
        # Checked as stored, float32 and scaled: 1e300 is finite in JSON and float64, inf
        # here, and a NaN vector would make every list wrong and be cached by its text.
        with np.errstate(over="ignore", invalid="ignore"):
            array = np.asarray(vector, np.float64).astype(np.float32)
            norm = np.linalg.norm(array)
            if norm == 0:
                return None, "an embedding of length 0"
            array = array / norm
        if not (np.isfinite(array).all() and abs(float(np.linalg.norm(array)) - 1) < 1e-3):
            return None, f"an embedding is not {dimensions} finite numbers"
        out.append(array)
    return out, ""
