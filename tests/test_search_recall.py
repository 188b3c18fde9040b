"""Chinese queries against their English twins on the demo site (the real sample: 1,333
papers, real Chinese digests): what share of the English query's papers the Chinese one
finds, without and with the glossary's English form of the query. Prints the table."""

from __future__ import annotations

import json

import pytest

from pipeline import config as config_mod
from pipeline import demo
from tests.support.servers import serve

pytestmark = pytest.mark.slow  # builds the demo's site

PAIRS = [("扩散模型", "diffusion"), ("强化学习", "reinforcement learning"),
         ("大语言模型", "large language model"), ("目标检测", "object detection"),
         ("联邦学习", "federated learning"), ("知识蒸馏", "distillation"),
         ("自动驾驶", "autonomous driving"), ("图神经网络", "graph neural network"),
         ("多模态", "multimodal"), ("量化", "quantization")]


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """Asked for before the browser: the demo's digest step runs its own event loop, which
    Playwright's running one would refuse."""
    cfg = demo.run(config_mod.load(demo.CONFIG), tmp_path_factory.mktemp("demo"),
                   lambda line: None)
    with serve(cfg.output_path) as url:
        yield url


def _found(page, query: str) -> set[int]:
    """The docs the page's own index finds (the module instance its scripts share)."""
    return set(page.evaluate("q => import(new URL('../theme/site.js', location.href).href)"
                             ".then(site => site.index.search(q)).then(r => r.docs)", query + " "))


def test_chinese_queries_find_what_their_english_twins_find(demo_site, page, capsys):
    page.goto(demo_site + "search/")
    after = {zh: _found(page, zh) for zh, _ in PAIRS}
    english = {en: _found(page, en) for _, en in PAIRS}

    def without_glossary(route):
        body = json.loads(route.fetch().text())
        body.pop("glossary")
        route.fulfill(json=body)

    page.route("**/search/manifest.json", without_glossary)
    page.goto(demo_site + "search/")
    before = {zh: _found(page, zh) for zh, _ in PAIRS}
    rows, recalls = [], []
    for zh, en in PAIRS:
        want = english[en]
        assert want, en
        r0, r1 = len(before[zh] & want) / len(want), len(after[zh] & want) / len(want)
        recalls.append(r1)
        rows.append(f"| {zh} | {en} | {len(want)} | {len(before[zh])} | {r0:.0%} | "
                    f"{len(after[zh])} | {r1:.0%} |")
        assert r1 >= r0
    with capsys.disabled():
        print("\n| 中文 | English | English finds | zh before | recall | zh after | recall |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        print("\n".join(rows))
    assert sum(recalls) / len(recalls) >= 0.8
