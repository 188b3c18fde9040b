"""Venues read from real arXiv comments (the bundled sample and the fixtures' listings, as
arXiv carries them), journal-refs and DOIs."""

from __future__ import annotations

import pytest

from pipeline._venue import accepted, short, venue

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


def test_the_tables_hold_fifty_real_comments():
    assert len(TAKEN) + len(NOT_TAKEN) >= 50


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
