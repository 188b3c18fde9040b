"""What the model writes through any OpenAI-compatible chat server (docs/DIGESTS.md): AI
reading digests (AI 导读) and change notes (修订说明)."""

from pipeline.digest.notes import run_notes
from pipeline.digest.run import DigestReport, run_digest

__all__ = ["DigestReport", "run_digest", "run_notes"]
