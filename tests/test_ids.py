"""What may become a path: arXiv ids and category codes (pipeline/_ids.py)."""

from __future__ import annotations

import pytest

from pipeline._ids import is_arxiv_id, is_category


@pytest.mark.parametrize("s", ["2401.12345", "0704.0001", "1412.9999v3", "2606.19617v12",
                               "hep-th/9901001", "math.GT/0309136", "cond-mat/0102536v2",
                               "astro-ph/0601001"])
def test_ids_of_both_styles_are_ids(s):
    assert is_arxiv_id(s)


@pytest.mark.parametrize("s", ["../../theme/templates/base", "2401.12345/../x", "2413.12345",
                               "2401.123", "2401.123456", "2401.12345v0", "2401.12345v",
                               "2401.12345\n", " 2401.12345", "hep-th/990100", "hep-th/../x",
                               "HEP-TH/9901001", "math.gt/0309136", "/9901001", "-th/9901001",
                               "hep-th//9901001", "", "2401.12345.html", None, 2401.12345])
def test_anything_else_is_not_an_id(s):
    assert not is_arxiv_id(s)


@pytest.mark.parametrize("s", ["cs.LG", "cs.AI", "hep-th", "math.GT", "physics.optics",
                               "stat.ML", "eess.IV", "q-bio.NC"])
def test_taxonomy_codes_are_categories(s):
    assert is_category(s)


@pytest.mark.parametrize("s", ["../x", "cs.lg", "cs.LG/", "cs", "cs.XX", "", " cs.LG", None])
def test_anything_else_is_not_a_category(s):
    assert not is_category(s)
