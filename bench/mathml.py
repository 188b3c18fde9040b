"""Math and diff benchmarks for the site. Prints figures; asserts nothing.

1. render_tex over every real abstract of the bundled sample (five days of arXiv CS
   listings): median and p95 ms per distinct abstract,
   cold (formula caches cleared before every abstract) and warm, and the share of
   formulas MathML could not take (they fall back to Unicode, else to their source);
2. word_diff on a 2,000-word abstract with 20 edits, and against an unrelated text.
Run: .venv/bin/python bench/mathml.py   (or `make bench`; `--smoke`: 100 abstracts)
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pipeline.replay import sample
from pipeline.site.render import mathml as _math
from pipeline.site.render import tex as _tex
from pipeline.site.render.diff import word_diff
from pipeline.site.render.tex import render_tex


def abstracts() -> list[str]:
    return [row["summary"] for day in sample.days() for row in sample.listing(day)]


def timed(texts: list[str], *, cold: bool) -> list[float]:
    times = []
    for text in texts:
        if cold:
            _math.formula.cache_clear()
            _math.formula_text.cache_clear()
        t0 = time.perf_counter()
        render_tex(text)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def bench_math(texts: list[str]) -> None:
    times = timed(texts, cold=True)
    timed(texts, cold=False)  # fill the cache
    warm = timed(texts, cold=False)
    with_math = [t for t, text in zip(times, texts, strict=True) if "$" in text]
    # Count formulas exactly as render_tex finds them, then which of them fell back.
    found = [
        (m["display"] or m["inline"] or m["paren"] or m["bracket"] or m["body"],
         m["inline"] is None and m["paren"] is None)
        for text in texts
        for m in _tex._TOKEN.finditer(text)
        if m["display"] or m["inline"] or m["paren"] or m["bracket"] or m["body"]
    ]
    failed = [tex for tex, display in found if _math.formula(tex, display=display) is None]
    q = statistics.quantiles(times, n=20)
    print(f"render_tex: {len(texts)} abstracts, {len(with_math)} with '$'")
    print(f"  cold: median {statistics.median(times):.3f} ms/abstract, p95 {q[18]:.3f} ms, "
          f"max {max(times):.2f} ms, total {sum(times):.0f} ms")
    print(f"  cold, abstracts with '$' only: median {statistics.median(with_math):.3f} ms, "
          f"mean {statistics.mean(with_math):.3f} ms")
    print(f"  warm cache: median {statistics.median(warm):.3f} ms, total {sum(warm):.0f} ms")
    print(f"  formulas {len(found)}, fell back {len(failed)} "
          f"({100 * len(failed) / max(len(found), 1):.2f}%)")
    for tex in sorted(set(failed))[:15]:
        print(f"    fallback: {tex[:80]!r}")


def bench_diff(texts: list[str]) -> None:
    rng = random.Random(7)
    words = " ".join(texts).split()[:2000]
    new = words.copy()
    for i in rng.sample(range(len(new)), 20):
        new[i] = "EDITED"
    old_s, new_s = " ".join(words), " ".join(new)
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        word_diff(old_s, new_s)
        runs.append((time.perf_counter() - t0) * 1000)
    print(f"word_diff: {len(words)} words, 20 replaced: median {statistics.median(runs):.1f} ms")
    # Worst case for SequenceMatcher: two unrelated 2,000-word texts over a small vocabulary.
    vocab = sorted(set(words))[:300]
    other = " ".join(rng.choice(vocab) for _ in range(2000))
    t0 = time.perf_counter()
    word_diff(old_s, other)
    print(f"word_diff: 2000 words vs an unrelated 2000: {(time.perf_counter() - t0) * 1000:.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Time math rendering and word diffs.")
    parser.add_argument("--smoke", action="store_true", help="100 abstracts")
    texts = list(dict.fromkeys(abstracts()))[:100 if parser.parse_args().smoke else None]
    bench_math(texts)
    bench_diff(texts)
