"""What arXiv said of a paper reading by reading: its comment, journal-ref and DOI.

The papers table keeps only the latest of these, and the versions table only titles and
abstracts; the snapshots of arXiv's two paths (the export API and OAI-PMH) keep every
reading that changed something (a new version, or the same version with new metadata:
arXiv adds a journal-ref or DOI without a new version). Read only for the papers that
need it: revisions to show or to note, and the papers a fork watches.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.sources import snapshot_schemas
from pipeline.store import Store

# The sources whose snapshots hold arXiv's readings: the export API's and OAI-PMH's.
ARXIV_READERS = ("arxiv", "oai")


@dataclass(frozen=True)
class Reading:
    version: int
    seen: dt.datetime
    comment: str | None
    journal_ref: str | None
    doi: str | None


def readings(store: Store, ids: Iterable[str],
             clean: Callable[[str | None], str | None] = lambda text: text,
             ) -> dict[str, list[Reading]]:
    """Per id, its readings oldest first (ties: the lower version first), each text
    through `clean`."""
    wanted = pa.array(sorted(set(ids)), pa.string())
    if not len(wanted):
        return {}
    columns = ["arxiv_id", "version", "comment", "journal_ref", "doi", "fetched_at"]
    table = pa.concat_tables(store.read_snapshots(source, columns)
                             for source in ARXIV_READERS if source in snapshot_schemas())
    table = table.filter(pc.is_in(table["arxiv_id"], value_set=wanted))
    table = table.sort_by([("arxiv_id", "ascending"), ("fetched_at", "ascending"),
                           ("version", "ascending")])
    out: dict[str, list[Reading]] = defaultdict(list)
    for row in table.to_pylist():
        out[row["arxiv_id"]].append(Reading(
            int(row["version"]), row["fetched_at"], clean(row["comment"]),
            clean(row["journal_ref"]), clean(row["doi"])))
    return dict(out)


def around(history: list[Reading], version: int) -> tuple[Reading | None, Reading | None]:
    """What arXiv showed with the version before, last, and with `version`, first."""
    return (_at_version(history, version - 1, last=True),
            _at_version(history, version, last=False))


def _at_version(history: list[Reading], version: int, *, last: bool) -> Reading | None:
    """The first (or last) reading of `version`."""
    found = [r for r in history if r.version == version]
    return (found[-1] if last else found[0]) if found else None
