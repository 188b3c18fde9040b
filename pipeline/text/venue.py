"""Where a paper was accepted, read from what arXiv carries: its journal-ref, its comment
("Accepted at ICML 2026", "To appear in …", "ACL 2026 Findings") or a publisher's DOI.

Comments are the authors' free text: "submitted to", "under review" and "… format" name
a venue that has not taken the paper, and never count. The reading is conservative: a
venue named without one of the phrases below counts only when it is a venue this module
knows (VENUES) or a conference or journal named with its year.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

# Phrases that say a venue took the paper (typos as authors write them: "Acccepted").
_TOOK = re.compile(
    r"\b(?:ac+e+pted|published|presented|appeared|(?:to|will)\s+appear"
    r"|to\s+be\s+(?:published|presented)"
    r"|camera[- ]ready(?:\s+version)?)\b"
    r"(?:\s+(?:and|&)\s+(?:published|presented))?"
    r"(?:\s+as\s+(?:an?\s+)?[\w-]+(?:\s+paper)?)?"
    r"(?:\s+(?:for|to)\s+(?:publication|presentation|appear))?"
    r"\s*(?:at|to|by|in|into|on|for|as\s+part\s+of|@)\s+(?:the\s+)?",
    re.IGNORECASE)
_REFUSED = re.compile(r"\bnot\s+(?:yet\s+)?(?:been\s+)?(?:accepted|published)\b",
                      re.IGNORECASE)
# Words that say a venue named without those phrases has not (yet) taken the paper.
_NOT = re.compile(
    r"\b(?:submitted|submission|under\s+(?:peer\s+)?review|in\s+review|review\s+at"
    r"|in\s+preparation|format|template|style|extended\s+version\s+of|possible\s+"
    r"publication|invited\s+to|rejected|withdrawn)\b",
    re.IGNORECASE)
# A venue that took an earlier paper, not this one ("extended version of a paper published
# at …"), when said before the phrase in the same sentence.
_EARLIER = re.compile(r"\b(?:extended\s+version|previous(?:ly)?|earlier\s+version|"
                      r"preliminary\s+version|conference\s+version|short\s+version)\b[^.]*$",
                      re.IGNORECASE)
# What follows the phrases but names no venue ("published in this paper", a link).
_NO_NAME = re.compile(r"(?:https?:|www\.|github|this\b|these\b|our\b|code\b|universit"
                      r"|(?:directory|section|appendix|supplement|table|figure|paper|article"
                      r"|manuscript|thesis)\b)", re.IGNORECASE)
# Where a venue's name ends: a sentence ("… ApJ. Added a reference", not "J. Fluid Mech."
# nor "Proc. of the"), a page count, a link, a version note ("v2:", "on 10/04/2007"), an
# aside ("(figs. 6 …)", ", major revision of …", ": some details added"), a note.
_END = re.compile(
    r"(?:;|\.$|\.\s+(?=(?-i:(?:[A-Z][a-z]+|A)\s+[a-z\d]))"
    r"|,?\s*\d+\s*(?:pages?|pp|figures?|tables?)\b"
    r"|\.?\s+(?:https?://|v\.?\s?\d+\b|in\s+(?:19|20)\d\d\b|\((?-i:[a-z])|to\s+be\b"
    r"|for\s+publication\b|(?-i:[A-Z][a-z]+):\s+(?-i:[a-z])"
    r"|on\s+(?:\d{1,2}[/.]|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d)"
    r"|(?-i:[A-Z]?[a-z]+)\s+(?:figures?|adjusted|added|corrected)\b)"
    r"|[,:]\s+(?-i:[a-z]\w*\s+[a-z])"
    r"|[,.]\s*(?:code|project|equal|first|supplementary|this)\b)",
    re.IGNORECASE)
# What a name may start with that is not the venue ("publication in MNRAS", "for the …").
_LEAD = re.compile(r"^(?:(?:in|at|the|for|on|publication|presentation)\b[\s:]*"
                   r"|as\s+(?:an?\s+)?|(?:an?\s+)?special\s+issue\s+of\s+)+", re.IGNORECASE)
# Names that say no venue: "accepted for publication", "to appear in the proceedings".
_UNNAMED = frozenset(("publication", "presentation", "proceedings", "the proceedings",
                      "press", "print", "a journal", "journal", "conference"))
# The Institute of Mathematical Statistics' comment: "Published in at http://dx.doi.org/…
# the Annals of Statistics (http://www.imstat.org/aos/) by the Institute of …".
_IMS = re.compile(r"published\s+in\s+at\s+\S+\s+(?:the\s+)?(?P<name>[^(]+?)\s*\(",
                  re.IGNORECASE)
# The venue first, acceptance after: "IEEE TVT has accepted this paper".
_HAS_ACCEPTED = re.compile(r"(?P<name>(?:[A-Z][\w&-]*\s+)*[A-Z][\w&-]*)\s+has\s+(?:now\s+)?"
                           r"accepted\s+(?:this|the|our)\s+(?:paper|work|manuscript|article)")
# Words a clause naming a venue alone may hold besides the name ("the", "of"); any other
# lowercase word ("talk given at the …", "version as discussion basis for the …") says
# the clause is about something else.
_CONNECTIVES = frozenset(("the", "of", "on", "in", "at", "and", "for", "to", "de", "des",
                          "du", "la", "le", "di", "del", "der", "und", "&", "-", "--", "–",
                          "by", "as", "a", "an", "version", "final", "camera-ready"))
# Venues readers know by name, for a comment that names one with its year and nothing else
# ("ACL 2026 Findings", "NeurIPS 2025"). Matched case-sensitively: "Interspeech" as written.
VENUES = (
    "AAAI", "AAMAS", "ACCV", "ACL", "ACM MM", "AISTATS", "ASPLOS", "BMVC", "CAV", "CCS",
    "CHI", "CIKM", "COLING", "COLM", "COLT", "CoRL", "CSCW", "CVPR", "DAC", "EACL", "EC",
    "ECAI", "ECCV", "ECIR", "ECML", "ECML-PKDD", "ECML_PKDD", "EMNLP", "EuroSys", "FAccT",
    "FOCS", "FSE", "HPCA", "ICALP", "ICASSP", "ICCV", "ICDAR", "ICDE", "ICDM", "ICIP",
    "ICLR", "ICME", "ICML", "ICPR", "ICRA", "ICSE", "IJCAI", "IJCNLP", "INFOCOM",
    "Interspeech", "INTERSPEECH", "IROS", "ISCA", "ISSTA", "JMLR", "KDD", "LREC", "MICCAI",
    "MICRO", "MIDL", "MobiCom", "NAACL", "NDSS", "NeurIPS", "NSDI", "OSDI", "PLDI", "POPL", "RA-L",
    "RecSys", "RSS", "SIGCOMM", "SIGGRAPH", "SIGIR", "SIGMOD", "SODA", "SOSP", "STOC",
    "TMLR", "TPAMI", "UAI", "UIST", "USENIX", "VLDB", "WACV", "WSDM", "WWW")
_YEAR = r"(?:\s?'\s?|\s|_|-(?=(?:19|20)\d\d))?(?P<year>(?:19|20)\d{2}|(?<=[A-Za-z'])\d{2})\b"
# A known venue may give a two-digit year after a space too ("ICLR 23 Workshop").
_KNOWN_YEAR = (r"(?:\s?'\s?|\s|_|-)?(?P<year>(?:19|20)\d{2}|(?<=[A-Za-z'_ -])\d{2}\b"
               r"(?!\s*(?:pages?|pp|figures?|tables?)\b))\b")
_KNOWN = re.compile(r"(?<![\w-])(?P<name>" + "|".join(
    re.escape(v) for v in sorted(VENUES, key=len, reverse=True)) + r")" + _KNOWN_YEAR)
# Any acronym with its year, for the short form of a venue already known to have taken
# the paper ("the 2026 IEEE International Conference on … (SMC 2026)" → SMC 2026).
_ACRONYM = re.compile(r"(?<![\w-])(?P<name>[A-Z][A-Za-z]*[A-Z][A-Za-z&_-]*)" + _YEAR)
_PAREN = re.compile(r"\((?:[^()]*\s)?(?P<name>[A-Z][A-Za-z]*[A-Z][A-Za-z&_-]*)\)")
_ANY_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_NAMED = re.compile(r"\b(?:proceedings\s+of|(?:conference|symposium|workshop)\s+on"
                    r"|transactions\s+on|journal\s+of)\b", re.IGNORECASE)
# Something every venue-naming comment has (a year, or a word of _TOOK or _NAMED): most
# comments ("12 pages, 5 figures") are dismissed by these cheap searches.
_HINT_YEAR = re.compile(r"[12][09]\d\d|'\d\d|[A-Z][-_ ]\d\d\b")
_HINT_WORDS = ("ccept", "cceept", "appear", "publish", "present", "camera", "proceedings")
_MIN_LETTERS = 2  # "J" (of "J. Yadernaya fizika") is no badge
SHORT_CHARS = 32  # a badge longer than this is cut at a word, with "…"
ARXIV_DOI = "10.48550/"  # arXiv's own DOIs say nothing about a venue


class Tier(StrEnum):
    """What kind of acceptance a venue is; OTHER is a main conference that none of the
    reader's categories counts among its top venues (TOP_VENUES)."""

    MAIN = "main"
    FINDINGS = "findings"
    WORKSHOP = "workshop"
    JOURNAL = "journal"
    OTHER = "other"


# The venues a reader of each arXiv category counts as its best, by the names papers give
# them (whole words, case as written): a fork's categories value the union of theirs.
# Kept to the few each field names first, so "accepted" at one of them still says much.
TOP_VENUES: dict[str, tuple[str, ...]] = {
    "cs.AI": ("AAAI", "IJCAI", "NeurIPS", "ICML", "ICLR"),
    "cs.AR": ("ISCA", "MICRO", "HPCA", "ASPLOS"),
    "cs.CC": ("STOC", "FOCS", "CCC"),
    "cs.CG": ("SoCG",),
    "cs.CL": ("ACL", "EMNLP", "NAACL"),
    "cs.CR": ("S&P", "Security & Privacy", "Security and Privacy", "CCS", "USENIX Security",
              "NDSS"),
    "cs.CV": ("CVPR", "ICCV", "ECCV"),
    "cs.CY": ("FAccT", "AIES"),
    "cs.DB": ("SIGMOD", "VLDB", "PVLDB", "ICDE", "KDD"),
    "cs.DC": ("OSDI", "SOSP", "NSDI", "EuroSys", "PODC"),
    "cs.DS": ("STOC", "FOCS", "SODA", "ICALP"),
    "cs.GR": ("SIGGRAPH", "Eurographics"),
    "cs.GT": ("EC",),
    "cs.HC": ("CHI", "UIST", "CSCW"),
    "cs.IR": ("SIGIR", "WSDM", "RecSys", "WWW", "KDD"),
    "cs.IT": ("ISIT",),
    "cs.LG": ("NeurIPS", "ICML", "ICLR"),
    "cs.LO": ("LICS", "CAV"),
    "cs.MA": ("AAMAS",),
    "cs.MM": ("ACM MM", "ACMMM"),
    "cs.NE": ("GECCO",),
    "cs.NI": ("SIGCOMM", "NSDI", "INFOCOM", "MobiCom"),
    "cs.OS": ("OSDI", "SOSP"),
    "cs.PL": ("PLDI", "POPL", "OOPSLA"),
    "cs.RO": ("ICRA", "IROS", "RSS", "CoRL"),
    "cs.SD": ("ICASSP", "Interspeech", "INTERSPEECH"),
    "cs.SE": ("ICSE", "FSE", "ASE", "ISSTA"),
    "cs.SI": ("KDD", "WWW", "ICWSM"),
    "eess.AS": ("ICASSP", "Interspeech", "INTERSPEECH"),
    "eess.IV": ("CVPR", "ICCV", "ECCV", "MICCAI"),
    "eess.SP": ("ICASSP",),
    "stat.ML": ("NeurIPS", "ICML", "ICLR", "COLT", "AISTATS"),
}
_WORKSHOP = re.compile(r"\b(?:workshops?|semeval|student\s+research|doctoral\s+consortium"
                       r"|challenge)\b", re.IGNORECASE)
_FINDINGS = re.compile(r"\bfindings\b", re.IGNORECASE)
_JOURNAL = re.compile(r"\b(?:journals?|transactions|letters|magazine|access|review|trans\."
                      r"|lett\.|j\.|(?-i:RA-L|TMLR|TPAMI|PAMI|JMLR|IJCV|TACL|JAIR|TOG|TIP"
                      r"|TNNLS))(?!\w)", re.IGNORECASE)
_CONFERENCE = re.compile(r"\b(?:conference|conf\.|proceedings|proc\.|symposium|congress"
                         r"|meeting|summit|track)\b", re.IGNORECASE)
_KNOWN_NAME = re.compile(r"(?<![\w-])(?:" + "|".join(
    re.escape(v) for v in sorted(VENUES, key=len, reverse=True)) + r")(?![\w-])")


@dataclass(frozen=True)
class Venue:
    name: str  # as the paper says it, one line
    short: str  # for a badge: "ICML 2026", "ACL 2026 Findings"
    source: str  # journal_ref, comment or doi

    def badge(self, strings: dict[str, str]) -> str:
        """Its badge in the site's language: the short name, or "Published" for a DOI."""
        return strings["venue_published"] if self.source == "doi" else self.short

    def said(self, strings: dict[str, str]) -> str:
        """Where it was accepted, whole: the name, or "Published (see the DOI)"."""
        return strings["venue_doi"] if self.source == "doi" else self.name


def tier(v: Venue, categories: Iterable[str]) -> Tier:
    """The kind of acceptance `v` is, for a reader of `categories`: a workshop or findings
    when its name says so, a journal when its name (or a bare DOI, or a journal-ref with
    no conference in it) says so, else a main conference, OTHER when none of the
    categories counts it among its TOP_VENUES."""
    name = f"{v.name} {v.short}"
    if v.source == "doi":
        return Tier.JOURNAL
    if _WORKSHOP.search(name):
        return Tier.WORKSHOP
    if _FINDINGS.search(name):
        return Tier.FINDINGS
    if _JOURNAL.search(name):
        return Tier.JOURNAL
    # A year names a conference in a comment; a journal-ref gives its journal's year too.
    if not (_CONFERENCE.search(name) or _KNOWN_NAME.search(name)
            or (v.source == "comment" and _ANY_YEAR.search(name))):
        return Tier.JOURNAL  # "Sensors", "Universe": a name alone is a journal's
    return Tier.MAIN if _valued(categories).search(name) else Tier.OTHER


@lru_cache(maxsize=64)
def _valued_of(categories: tuple[str, ...]) -> re.Pattern[str]:
    names = sorted({n for c in categories for n in TOP_VENUES.get(c, ())}, key=len,
                   reverse=True)
    if not names:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def _valued(categories: Iterable[str]) -> re.Pattern[str]:
    return _valued_of(tuple(sorted(set(categories))))


def accepted(comment: str | None) -> bool:
    """Whether the comment says a venue took the paper."""
    return _from_comment(comment) is not None


@lru_cache(maxsize=1 << 16)  # a paper's readings repeat its comment
def venue(comment: str | None, journal_ref: str | None, doi: str | None) -> Venue | None:
    """The venue that took the paper: its journal-ref first (arXiv's field for it), then
    its comment, then a publisher's DOI (the venue unnamed)."""
    if journal_ref and journal_ref.strip():
        name = " ".join(journal_ref.split())
        return Venue(name, short(name), "journal_ref")
    found = _from_comment(comment)
    if found:
        return Venue(found, short(found), "comment")
    if doi and doi.strip() and not doi.strip().lower().startswith(ARXIV_DOI):
        return Venue(doi.strip(), "DOI", "doi")
    return None


def _from_comment(comment: str | None) -> str | None:
    if not comment or not (_HINT_YEAR.search(comment)
                           or any(w in comment.lower() for w in _HINT_WORDS)):
        return None
    text = " ".join(comment.split())
    if _REFUSED.search(text):
        return None
    if ims := _IMS.search(text):
        return _named(ims["name"])
    if " has " in text and (first := _HAS_ACCEPTED.search(text)) and not _NOT.search(text):
        return _named(first["name"])
    took = _TOOK.search(text)
    if took:
        rest = text[took.end():]
        if _NO_NAME.match(rest) or _EARLIER.search(text[:took.start()]):
            return None
        return _named(_cut(rest))
    if _NOT.search(text):
        return None
    known = _KNOWN.search(text)
    named = _NAMED.search(text)
    if not known and named and (named[0].lower().startswith("proceedings")
                                or _ANY_YEAR.search(text)):
        known = named
    if not known:
        return None
    # A venue named alone: its clause, to the end of its sentence, when the words before
    # the name are only connectives ("the", "of"), not "talk given at the …".
    start = _clause_start(text, known.start())
    if any(w[0].islower() and w not in _CONNECTIVES for w in text[start:known.start()].split()):
        return None
    return _named(_cut(text[start:].split(". ")[0]))


def _clause_start(text: str, at: int) -> int:
    """Where the clause holding `at` starts: after the last ". ", "; " or ", " before it."""
    cut = max(text.rfind(sep, 0, at) for sep in (". ", "; ", ", "))
    return 0 if cut < 0 else cut + 2


def _cut(rest: str) -> str:
    rest = _LEAD.sub("", rest.lstrip())
    end = _END.search(rest)
    name = rest[:end.start()] if end else rest
    name = _LEAD.sub("", name.strip(" ,.:;-–—\\\"'`")).strip(" ,.:;-–—\\\"'`")
    if name.count("(") > name.count(")"):  # "(ICML 2026" cut off by a sentence end
        name += ")"
    elif name.endswith(")") and name.count(")") > name.count("("):  # "Opt. Lett. 2007)"
        name = name[:-1].rstrip()
    return name


def _named(name: str) -> str | None:
    """The name, unless it names no venue ("publication", "J")."""
    letters = sum(c.isalpha() for c in name)
    if letters < _MIN_LETTERS or name.lower() in _UNNAMED or name.count('"') % 2:
        return None  # a quoted title cut in half is no name either
    return name


def short(name: str) -> str:
    """A badge's text: the venue's acronym and year, with "Workshop" or "Findings" when
    the venue says so; else the name cut at a word."""
    bare = re.sub(r"\(((?:19|20)\d\d)\)", r"\1", name)  # "25th ICCIT (2022)"
    m = _KNOWN.search(bare) or _ACRONYM.search(bare)
    acronym, year = (m["name"], m["year"]) if m else (None, None)
    if acronym is None and (p := _PAREN.search(name)):
        acronym = p["name"]
        year = (y := _ANY_YEAR.search(name)) and y[0]
    if acronym:
        acronym = acronym.rstrip("-_")  # "EXON-2006"
        year = f"20{year}" if year and len(year) == 2 else year
        tail = " Workshop" if re.search(r"\bworkshop\b", name, re.IGNORECASE) else (
            " Findings" if re.search(r"\bfindings\b", name, re.IGNORECASE) else "")
        return " ".join(x for x in (acronym, year) if x) + tail
    if len(name) <= SHORT_CHARS:
        return name
    return name[:SHORT_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:(") + "…"
