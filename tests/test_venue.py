"""Venues read from real arXiv comments (the bundled sample and the fixtures' listings, as
arXiv carries them), journal-refs and DOIs."""

from __future__ import annotations

import pytest

from pipeline.text.taxonomy import CS_CATEGORIES
from pipeline.text.venue import Tier, accepted, short, tier, venue

# (comment, the badge it gives)
TAKEN = [
    ("Accepted at EIML@ICML 2026", "ICML 2026"),
    ("This work is accepted at IEEE Transactions on Communications", "IEEE Transactions on…"),
    ("Accepted for publication at MICCAI 2026", "MICCAI 2026"),
    ("Accepted at the ICLR 2026 Workshop on LLM Reasoning. 13 pages, 2 figures",
     "ICLR 2026 Workshop"),
    ("Accepted to ACL 2026 Main. 27 pages, 5 figures", "ACL 2026"),
    ("Accepted by KDD 2026 ADS Track", "KDD 2026"),
    ("To appear in the Proceedings of the 11th Workshop on Computational Linguistics and "
     "Clinical Psychology (CLPsych 2026)", "CLPsych 2026 Workshop"),
    ("10 pages, 1 figure. To be published in the 2026 IEEE Symposium on Agentic Services",
     "2026 IEEE Symposium on Agentic…"),
    ("Accepted by SCA2026(poster)", "SCA 2026"),
    ("Accepted to CVPR 2026 Findings", "CVPR 2026 Findings"),
    ("Accepted by ICML 2026 Workshop SPIGM, 5 pages, 3 figures", "ICML 2026 Workshop"),
    ("Accepted for TMLR, https://openreview.net/forum?id=xN7NYpQeBm", "TMLR"),
    ("Accepted to MICCAI 2026. This is the pre-review submitted version, not the "
     "camera-ready version.", "MICCAI 2026"),
    ("10 pages including references, 8 figures, accepted for publication at the 43rd "
     "International Conference on Machine Learning (ICML 2026)", "ICML 2026"),
    ("11 pages, 3 figures, Early accepted at MICCAI 2026", "MICCAI 2026"),
    ("11 pages, 6 figures, including supplementary material. Presented as a non-archival "
     "paper at the CV4Edu Workshop, CVPR 2026", "CVPR 2026 Workshop"),
    ("12 pages, 5 figures; published in IEEE Access. Code: https://github.com/x/CoSA",
     "IEEE Access"),
    ("12 pages, 6 figures, accepted by CVPR 2025", "CVPR 2025"),
    ("14 pages, 6 figures. Accepted to ECCV 2026", "ECCV 2026"),
    ("18 pages, 11 figures. Published in Phys. Chem. Chem. Phys", "Phys. Chem. Chem. Phys"),
    ("18 pages, 12 figures, in ECML_PKDD'26", "ECML_PKDD 2026"),
    ("2026 IEEE International Conference on Robotics and Automation(ICRA)", "ICRA 2026"),
    ("24 pages, 8 figures, 16 tables. To appear at ACL 2026 (submitted via ARR)", "ACL 2026"),
    ("30 pages, camera-ready version in ICML 2026", "ICML 2026"),
    ("5 pages, 3 figures, 2 tables, Companion Proceedings of the 21st ACM/IEEE International "
     "Conference on Human-Robot Interaction", "Companion Proceedings of the…"),
    ("7 pages, 2 figures, 2 tables. Accepted as a poster at AMIA 2026 Annual Symposium",
     "AMIA 2026"),
    ("ACL 2026", "ACL 2026"),
    ("ACL 2026 Findings", "ACL 2026 Findings"),
    ("ACL2026", "ACL 2026"),
    ("Acccepted in ECCV 2026", "ECCV 2026"),
    ("Acceepted to the Second Workshop on Compositional Learning at ICML 2026, Seoul, "
     "South Korea", "ICML 2026 Workshop"),
    ("Accepted and Published at ECCV 2026", "ECCV 2026"),
    ("Accepted as a poster at ICLR 2026. Code available at https://github.com/damilab/CARE",
     "ICLR 2026"),
    ("Accepted at EC'26", "EC 2026"),
    ("Accepted at ECCV '26", "ECCV 2026"),
    ("Accepted at ECCV 2026. Project Page: https://alex-costanzino.github.io/fdho/",
     "ECCV 2026"),
    ("Accepted at The 19th European Conference on Computer Vision (ECCV), 2026", "ECCV 2026"),
    ("Accepted at the IEEE International Conference on Multimedia and Expo (ICME) 2026",
     "ICME 2026"),
    ("Accepted by KDD'26", "KDD 2026"),
    ("Accepted by RA-L 2026", "RA-L 2026"),
    ("Accepted for publication in IEEE Robotics and Automation Letters (RA-L), 2026",
     "RA-L 2026"),
    ("Accepted to Findings of ACL 2026", "ACL 2026 Findings"),
    ("Accepted to Interspeech2026", "Interspeech 2026"),
    ("Accepted to the 32nd ACM SIGKDD Conference on Knowledge Discovery and Data Mining "
     "(KDD 2026)", "KDD 2026"),
    ("Camera Ready version of IJCAI 2026", "IJCAI 2026"),
    ("ECCV 2026. Project page: https://saradorfman1.github.io/SemanticBrowsing-webpage/",
     "ECCV 2026"),
    ("Provisionally accepted for presentation at MICCAI 2026", "MICCAI 2026"),
    ("Published as a paper at 3rd DATA-FM workshop @ ICLR 2026, Brazil", "ICLR 2026 Workshop"),
    ("This paper has been accepted for presentation at Interspeech 2026", "Interspeech 2026"),
    ("This work is accepted to ICML 2026 as an oral. The project page: https://github.com/x",
     "ICML 2026"),
    ("Vision paper, published in Conference on Games 2026", "Conference on Games 2026"),
    ("accepted to ICIP2026", "ICIP 2026"),
    # from the fixtures' week of listings
    ("13 pages; ICML 2026 Position Paper Track. Sangyeon Yoon and Yeachan Jun contributed "
     "equally", "ICML 2026"),
    ("Accepted at PRESTIGE workshop at ICPR 2026", "ICPR 2026 Workshop"),
    ("Accepted to IEEE Signal Processing Letters (SPL), 2026", "SPL 2026"),
    ("Aceepted by MICCAI2026. More modifications may be performed", "MICCAI 2026"),
    ("European Conference on Computer Vision -- ECCV 2026", "ECCV 2026"),
    ("Published as a conference paper at CVPR 2026", "CVPR 2026"),
    ("accepted by ECCV26", "ECCV 2026"),
    ("accepted into the BEA 2026 workshop at ACL", "BEA 2026 Workshop"),
    ("MIDL 2026", "MIDL 2026"),
    ("The 4th International Conference on Computational and Data Sciences in Economics and "
     "Finance (CDEF 2026)", "CDEF 2026"),
    # from arXiv's own test data (arXiv/arxiv-browse, .abs files) and OAI-PMH records
    # recorded by others: abbreviated journals, proceedings, acceptance said after the name
    ("accepted for publication in J. Fluid Mech.", "J. Fluid Mech"),
    ("To appear in the Proc. of the IEEE International Conference on Software Testing, "
     "Verification and Validation (ICST) 2021", "ICST 2021"),
    ("Published in at http://dx.doi.org/10.1214/07-AAP481 the Annals of Applied Probability "
     "(http://www.imstat.org/aap/) by the Institute of Mathematical Statistics "
     "(http://www.imstat.org)", "Annals of Applied Probability"),
    ("Accepted for publication as an ApJ Letter. 14 pages, 3 figures.", "ApJ Letter"),
    ("18 pages, 9 tables and 6 figures; accepted by ApJ. Added a reference and corrected a "
     "typo", "ApJ"),
    ("23 pages, to appear in Int. J. Geom. Methods Mod. Phys. (IJGMMP)", "IJGMMP"),
    ("Modified to agree with version accepted for publication in Class. Quantum Grav",
     "Class. Quantum Grav"),
    ("16 pages, 4 colour figures, 1 B/W figure, 1 table; Accepted for publication in ApJ on "
     "March 26, 2007", "ApJ"),
    ("Accepted for publication on MNRAS (figs. 6 and 10 shown at degraded resolution)",
     "MNRAS"),
    ("Accepted in PRL for publication", "PRL"),
    ("22 pages, 11 figures, 1 table, accepted for the publication in MNRAS", "MNRAS"),
    ("3 pages with 5 figures (to appear in Opt. Lett. 2007)", "Opt. Lett. 2007"),
    ("Invited short review to appear in a special issue of Solid State Communications",
     "Solid State Communications"),
    ("To appear in ApJ Letters. A version with high res images is at "
     "http://85.20.11.14/hosting/punsly/APJLetter4.2.07/", "ApJ Letters"),
    ("6 pages; RevTeX; published in Physical Review A in 2013; as compare to the journal "
     "version, we have added a note", "Physical Review A"),
    ("15 pages, 11 figures, accepted by A&A, major revision of Section 5 following the "
     "referee's comments", "A&A"),
    ("final version to be published in Phys Rev B: some calculational details added",
     "Phys Rev B"),
    ("14 pages, 6 figures, 4 tables, International Symposium on Exotic Nuclei (EXON-2006), "
     "17-22 July, 2006, Khanty-Mansiysk, Russia", "EXON 2006"),
    ("4 pages, 2 figures. It will appear on the Proceedings of the 17th Lomonosov Conference "
     "on Elementary Particle Physics. Moscow State University, Moscow, 20-26 August, 2015. "
     "Invited talk", "Proceedings of the 17th…"),
    ('14 pages; to appear in \\"Algorithmica\\". Part of this work has been presented at '
     "the ICALP 2011 Group Testing Workshop; arXiv:1106.3680", "Algorithmica"),
    ("In proceedings of the 19th IEEE International Conference on Software Testing, "
     "Verification and Validation 2026 (ICST '26)", "ICST 2026"),
    # the forms the parser used to miss
    ("Accepted in 25th ICCIT (2022)", "ICCIT 2022"),
    ("(AAAI-23)", "AAAI 2023"),
    ("ICLR 23 Workshop", "ICLR 2023 Workshop"),
    ("Appeared in the Proceedings of the 2025 IEEE International Conference on Robotics and "
     "Automation (ICRA 2025)", "ICRA 2025"),
    ("IEEE TVT has accepted this paper", "IEEE TVT"),
]
# Comments naming a venue that has not taken the paper (or naming none).
NOT_TAKEN = [
    "Preview, under submission for EMNLP 2026",
    "Under review at COLM 2026 (Conference)",
    "Under Review",
    "30 pages, 9 figures, 5 tables, Submitted to International Journal of Speech Technology",
    "under review. Code: https://github.com/YuxuZhou-CN/combination-problem-generation",
    "Submitted to EMNLP 2026",
    "6 pages, 6 figures. Submitted to IEEE GLOBECOM 2026",
    "This is a preprint of a manuscript currently under peer review",
    "The paper was not accepted; this version adds experiments",
    "10 pages, 10 figures, submitted to SIGSPATIAL'26",
    "12 pages, 8 figures. NeurIPS 2024 format",
    "17 pages, 4 figures; ECCV 2026 submission; supplementary material uploaded as ancillary "
    "file",
    "18 pages, 6 figures, in preparation for journal submission",
    "2026 13th IEEE International Conference on Intelligent Systems, IS'26 submission 65",
    "35 pages, 2 figures, 7 tables, submitted for publication",
    "38 pages, 6 figures, journal paper",
    "5 pages, 1 figure, 4 tables. IEEE conference format (IEEEtran)",
    "5 pages, 2 figures, submitted to IEEE Wireless Communications Letters for possible "
    "publication",
    "5 pages, 5 figures. This is the revised version of a manuscript currently under review "
    "for publication in IEEE Geoscience and Remote Sensing Letters",
    "78 pages, 16 figures, 7 tables. Submitted to NeurIPS 2026.",
    "8 pages, 12 figures, conference",
    "ACL ARR May (EMNLP 2026) Submission",
    "Extended version of a paper accepted (Oral) at the RobustifAI Workshop, IJCAI-ECAI 2026",
    "Extended version of a paper published in the proceedings of KR 2025",
    "The extended version of a paper published at the 2026 IEEE Conference on Artificial "
    "Intelligence (CAI). Includes an additional appendix",
    "NeurIPS 2026 submission. 15 pages, 8 figures",
    "Rejected from ICML 2026",
    "Under review at BlackboxNLP (EMNLP 2026)",
    "This work has been submitted to the IEEE Internet of Things Journal for possible "
    "publication",
    "Code published at https://github.com/x/y",
    "Submitted as a conference paper to NeurIPS 2026",  # the fixtures' listings
    "This work has been submitted to the IEEE Transactions on Geoscience and Remote Sensing "
    "for possible publication",
    "The results presented in this paper are preliminary",
    "4th place in ICRA 2026 GOOSE 2D Semantic Segmentation Challenge",
    "Conference version appeared in SAGT 2025",
    # from arXiv's own test data and recorded OAI-PMH records: acceptance with no venue
    # named, a journal cut to one letter, talks, theses and places in the paper
    "Version accepted for publication",
    "9 pages, 7 figures. Phys. Rev. B, accepted for publication",
    "The final version. To appear in J. Yadernaya fizika",
    "10 pages, AMSLaTeX v1.0 or 1.1. This is a survey talk given at the May 1991 Workshop on "
    "Mirror Symmetry at MSRI",
    'Phd thesis in Fundamental and Applied Physics presented at University"Federico II" '
    "(Naples, Italy) on 29th April 2016",
    "5 pages, 4 figures. Complete results, including mathematica readable form, presented in "
    "the directory aux/ included in the source of this manuscript.",
    "Preliminary version as discussion basis for the ECT* workshop on 'The proton radius "
    "puzzle', Trento 2016",
    "4 pages, 4 figures, talk given at the 6th International Conference on Hard and "
    "Electromagnetic Probes of High-Energy Nuclear Collisions (Hard Probes 2013), November "
    "4-8, 2013 (Cape Town, South Africa)",
    "49 pages, 5 figures, talk given at the Poincar\\'e Seminar ``Gravitation et "
    "Exp\\'erience'' (28 October 2006, Paris); to appear in the proceedings to be "
    'published by Birkh\\"auser',
    '5 pages, 5 figures. Invited talk presented at the meeting: "Massive Stars: fundamental '
    'parameters and circumstellar interactions", Carilo, Dec 2006',
    "12 pages, 10 figures, ICML 21 pages of appendix",
    "",
    None,
]


@pytest.mark.parametrize(("comment", "badge"), TAKEN)
def test_a_comment_saying_a_venue_took_the_paper(comment, badge):
    found = venue(comment, None, None)
    assert found is not None and found.source == "comment"
    assert found.short == badge
    assert accepted(comment)


@pytest.mark.parametrize("comment", NOT_TAKEN)
def test_a_comment_not_saying_so(comment):
    assert venue(comment, None, None) is None
    assert not accepted(comment)


def test_the_tables_hold_a_hundred_real_comments():
    assert len(TAKEN) + len(NOT_TAKEN) >= 100


def test_the_journal_ref_comes_first_then_the_comment_then_a_publishers_doi():
    assert venue("Accepted at ICML 2026", "Proc. ICML 2026, PMLR 267", "10.1/x") == \
        venue(None, "Proc.  ICML 2026,\nPMLR 267", None)
    got = venue("Accepted at ICML 2026", "Proc. ICML 2026, PMLR 267", None)
    assert (got.name, got.short, got.source) == ("Proc. ICML 2026, PMLR 267", "ICML 2026",
                                                 "journal_ref")
    assert venue("Submitted to ICML 2026", None, "10.1145/1234") == \
        venue(None, None, " 10.1145/1234 ")
    assert venue(None, None, "10.1145/1234").source == "doi"
    assert venue(None, None, "10.48550/arXiv.2606.00001") is None  # arXiv's own DOI
    assert venue(None, "  ", "") is None


def test_a_badge_stays_short():
    assert short("Information Processing & Management (Elsevier IPM)") == "IPM"
    long = "MeMo Workshop on Mechanistic Interpretability & Neuro-symbolic Approaches"
    assert len(short(long)) <= 33 and short(long).endswith("…")
    assert short("x" * 200).endswith("…")  # one long word: cut inside it


# (comment as the sample carries it, its tier for a reader of every cs.* category)
TIERS = [
    ("Accepted to ACL 2026 Main. 27 pages, 5 figures", Tier.MAIN),
    ("14 pages, 6 figures. Accepted to ECCV 2026", Tier.MAIN),
    ("Accepted by the 47th IEEE Security & Privacy 2026", Tier.MAIN),
    ("Accepted to CVPR 2026 Findings", Tier.FINDINGS),
    ("Accepted to Findings of ACL 2026", Tier.FINDINGS),
    ("Accepted at the ICLR 2026 Workshop on LLM Reasoning. 13 pages, 2 figures",
     Tier.WORKSHOP),
    ("11 pages, 6 figures, including supplementary material. Presented as a non-archival "
     "paper at the CV4Edu Workshop, CVPR 2026", Tier.WORKSHOP),
    ("Accepted by Semeval, ACL 2026", Tier.WORKSHOP),
    ("Accepted for TMLR, https://openreview.net/forum?id=xN7NYpQeBm", Tier.JOURNAL),
    ("12 pages, 5 figures; published in IEEE Access. Code: https://github.com/x/CoSA",
     Tier.JOURNAL),
    ("This work is accepted at IEEE Transactions on Communications", Tier.JOURNAL),
    ("Accepted to RA-L 2026", Tier.JOURNAL),
    ("Accepted at 2026 Simpósio Brasileiro de Jogos e Entretenimento Digital (SBGames)",
     Tier.OTHER),
    ("Accepted at IEEE Conference on Games (IEEE CoG) 2026", Tier.OTHER),
    ("Accepted to ICME 2026 as an oral paper", Tier.OTHER),
]


@pytest.mark.parametrize(("comment", "expected"), TIERS)
def test_each_venue_says_its_tier(comment, expected):
    took = venue(comment, None, None)
    assert took is not None and tier(took, CS_CATEGORIES) is expected


def test_a_top_venue_of_categories_the_fork_does_not_follow_is_another_conference():
    cvpr = venue("Accepted to CVPR 2026", None, None)
    ccs = venue("Accepted at ACM CCS 2026", None, None)
    assert cvpr is not None and ccs is not None
    assert tier(cvpr, ["cs.CV"]) is Tier.MAIN and tier(ccs, ["cs.CV"]) is Tier.OTHER
    assert tier(ccs, ["cs.CR"]) is Tier.MAIN and tier(cvpr, ["cs.CR"]) is Tier.OTHER
    assert tier(venue(None, None, "10.1145/1234") or cvpr, ["cs.CV"]) is Tier.JOURNAL
    assert tier(venue(None, "Phys. Rev. D 110, 123 (2024)", None) or cvpr, []) is Tier.JOURNAL
