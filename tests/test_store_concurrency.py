"""Commands that run at once, as real processes: readers while a writer commits, and two
builds of one site."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from pipeline import ingest
from pipeline.config import Config
from pipeline.replay import sample
from pipeline.site.writer import JOURNAL
from pipeline.store import Store

pytestmark = pytest.mark.slow  # commands run as real processes at once

# Commits `papers` over and over, each time with every row changed, so each commit writes
# the table anew and its files replace those the last manifest named.
_WRITER = """
import sys
import pyarrow as pa
from pipeline.sources import catalog
from pipeline.store import Store

store = Store(sys.argv[1], catalog)
papers = store.read("papers")
column = papers.schema.get_field_index("ai_related")
for n in range(int(sys.argv[2])):
    flags = pa.array([n % 2 == 0] * papers.num_rows)
    store.write("papers", papers.set_column(column, "ai_related", flags))
    print(n, flush=True)
"""
_COMMITS = 60


def _papertrail(cfg: Config, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", "from pipeline.cli import main; main()",
                             "--config", str(cfg.path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture
def ingested_config(config: Config) -> Config:
    """A store holding the sample's first day, and a topic to preview."""
    with open(config.path, "a", encoding="utf-8") as fh:
        fh.write('\n[[topics]]\nslug = "rl"\nname = { zh = "强化学习", en = "RL" }\n'
                 'keywords = ["reinforcement", "agent", "reward", "policy"]\n')
    ingest.ingest_arxiv(config, Store(config.store_path), now=sample.run_at(sample.days()[0]))
    return config


def test_readers_see_one_commit_whole_while_a_writer_commits(ingested_config):
    """`Store.read`, `Store.library` and `papertrail topics preview`, none holding the lock,
    looped against a writer process committing 60 times: not one fails."""
    cfg = ingested_config
    store = Store(cfg.store_path)
    papers = store.read("papers").num_rows
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(cfg.store_path),
                               str(_COMMITS)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    writer.stdout.readline()  # it has committed once: the race is on
    reads, failures, previews = 0, [], []
    preview = _papertrail(cfg, "topics", "preview", "rl")
    started = time.monotonic()
    while writer.poll() is None:
        try:
            assert store.read("papers").num_rows == papers
            assert store.library().num_rows == papers
        except Exception as exc:  # counted, and shown below
            failures.append(repr(exc))
        reads += 1
        if preview.poll() is not None:
            previews.append((preview.returncode, *preview.communicate()))
            preview = _papertrail(cfg, "topics", "preview", "rl")
    previews.append((preview.wait(), *preview.communicate()))
    seconds = time.monotonic() - started
    assert writer.returncode == 0
    print(f"{reads} reads, {len(previews)} previews over {_COMMITS} commits in {seconds:.1f} s")
    assert reads > 100 and len(previews) >= 3  # the reads overlapped the commits
    assert failures == []
    assert [(code, err) for code, _, err in previews if code or err] == []
    assert all(out.startswith("rl: ") for _, out, _ in previews)



def test_a_reader_keeps_the_files_of_its_commit_until_it_is_done(ingested_config):
    """While a reader holds a snapshot, a writer's commits delete none of the files it
    reads; the first commit after it is done deletes them."""
    cfg = ingested_config
    reader = Store(cfg.store_path)
    with reader.snapshot():
        files = reader.table_files("papers")
        papers = reader.read("papers")
        subprocess.run([sys.executable, "-c", _WRITER, str(cfg.store_path), "1"], check=True)
        assert Store(cfg.store_path).table_files("papers") != files  # committed anew
        assert all(path.is_file() for path in files)
        assert reader.read("papers").equals(papers)
    # Its first write is the one above again (no commit); its second commits.
    subprocess.run([sys.executable, "-c", _WRITER, str(cfg.store_path), "2"], check=True)
    assert not any(path.exists() for path in files)


def test_two_builds_at_once_leave_the_site_of_the_newest_store(ingested_config):
    """A build is writing the site when a writer keeps a tenth of the papers and a second
    build starts, as when two `papertrail run` overlap: both finish, the second after
    saying it waits, and the folder is the site of the store as it is now (one more build
    finds nothing to write or remove)."""
    cfg = ingested_config
    store = Store(cfg.store_path)
    papers = store.read("papers")
    first = _papertrail(cfg, "build")
    journal = cfg.output_path / JOURNAL
    while not journal.exists() and first.poll() is None:  # it has read the store, and writes
        time.sleep(0.05)
    store.write("papers", papers.slice(0, papers.num_rows // 10))
    second = _papertrail(cfg, "build")
    done = [(*build.communicate(), build.returncode) for build in (first, second)]
    assert [code for _, _, code in done] == [0, 0], done
    again = _papertrail(cfg, "build")
    out, err = again.communicate()
    assert again.returncode == 0, err
    assert " · 0 written, " in out and ", 0 stale removed · " in out, (out, done)
    assert "another papertrail build is writing this site; waiting" in done[1][1]
    assert f"{cfg.output_path}:" in done[1][1]
