"""arXiv's category taxonomy (https://arxiv.org/category_taxonomy), used to validate config."""

# All 40 computer-science categories: the default coverage.
CS_CATEGORIES: tuple[str, ...] = (
    "cs.AI", "cs.AR", "cs.CC", "cs.CE", "cs.CG", "cs.CL", "cs.CR", "cs.CV", "cs.CY", "cs.DB",
    "cs.DC", "cs.DL", "cs.DM", "cs.DS", "cs.ET", "cs.FL", "cs.GL", "cs.GR", "cs.GT", "cs.HC",
    "cs.IR", "cs.IT", "cs.LG", "cs.LO", "cs.MA", "cs.MM", "cs.MS", "cs.NA", "cs.NE", "cs.NI",
    "cs.OH", "cs.OS", "cs.PF", "cs.PL", "cs.RO", "cs.SC", "cs.SD", "cs.SE", "cs.SI", "cs.SY",
)

_OTHER = {
    "astro-ph": "CO EP GA HE IM SR",
    "cond-mat": "dis-nn mes-hall mtrl-sci other quant-gas soft stat-mech str-el supr-con",
    "econ": "EM GN TH",
    "eess": "AS IV SP SY",
    "math": "AC AG AP AT CA CO CT CV DG DS FA GM GN GR GT HO IT KT LO MG MP NA NT OA OC "
    "PR QA RA RT SG SP ST",
    "nlin": "AO CD CG PS SI",
    "physics": "acc-ph ao-ph app-ph atm-clus atom-ph bio-ph chem-ph class-ph comp-ph data-an "
    "ed-ph flu-dyn gen-ph geo-ph hist-ph ins-det med-ph optics plasm-ph pop-ph soc-ph space-ph",
    "q-bio": "BM CB GN MN NC OT PE QM SC TO",
    "q-fin": "CP EC GN MF PM PR RM ST TR",
    "stat": "AP CO ME ML OT TH",
}
_STANDALONE = ("gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph", "nucl-ex", "nucl-th",
               "quant-ph")

ALL_CATEGORIES: frozenset[str] = frozenset(
    CS_CATEGORIES
    + _STANDALONE
    + tuple(f"{archive}.{code}" for archive, codes in _OTHER.items() for code in codes.split())
)
