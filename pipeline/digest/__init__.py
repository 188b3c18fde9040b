"""AI reading digests (AI 导读) through any OpenAI-compatible chat server (docs/DIGESTS.md)."""

from pipeline.digest.run import DigestReport, run_digest

__all__ = ["DigestReport", "run_digest"]
