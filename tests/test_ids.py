"""arXiv's identifier grammar and category taxonomy, as the sources check them."""

from __future__ import annotations

import pytest

from pipeline.text.ids import is_arxiv_id, is_category


@pytest.mark.parametrize("s", [
    "0704.0001", "1412.9999", "1501.00001", "2606.19617", "2606.19617v2", "2202.12139v13",
    "9912.99999",  # December 2099 still fits the grammar
])
def test_new_style_ids_are_accepted(s: str) -> None:
    assert is_arxiv_id(s)


@pytest.mark.parametrize("s", [
    "hep-th/9901001", "hep-th/9901001v12", "math.GT/0309136", "math.GT/0309136v1",
    "cs.AI/0101001", "astro-ph/0601001v1", "cmp-lg/9404001", "alg-geom/9108001",
    "quant-ph/0703999", "q-bio.BM/0401001", "nlin.CD/0201001",
])
def test_old_style_ids_are_accepted(s: str) -> None:
    assert is_arxiv_id(s)


@pytest.mark.parametrize(("s", "why"), [
    ("", "empty"),
    ("2606.1961", "a four-digit number after 2014"),
    ("1412.00001", "a five-digit number before 2015"),
    ("0703.0001", "new style before April 2007"),
    ("2613.00001", "month 13"),
    ("2600.00001", "month 00"),
    ("2606.00000", "number zero"),
    ("2606.19617v0", "version zero"),
    ("2606.19617v", "an empty version"),
    ("2606.19617V2", "a capital V"),
    ("2606.19617v02", "a version with a leading zero"),
    (" 2606.19617", "surrounding space"),
    ("2606.19617\n", "a trailing newline"),
    ("٢٦٠٦.١٩٦١٧", "digits of another script"),
    ("2606_19617", "no dot"),
    ("hep-th/0704001", "old style after March 2007"),
    ("hep-th/9107001", "old style before August 1991"),
    ("hep-th/9913001", "old style month 13"),
    ("hep-th/9901000", "old style number zero"),
    ("hep-th/990100", "six digits"),
    ("hep-th/99010011", "eight digits"),
    ("stat/0501001", "an archive that issued no old-style ids"),
    ("no-such/9901001", "an unknown archive"),
    ("math.ZZ/0309136", "a subject class math does not have"),
    ("math.gt/0309136", "a lower-case subject class"),
    ("HEP-TH/9901001", "a capitalised archive"),
    ("../etc/passwd", "a path"),
    ("<script>", "markup"),
    ("arXiv:2606.19617", "a prefix"),
    ("2606.19617/", "a trailing slash"),
])
def test_malformed_ids_are_refused(s: str, why: str) -> None:
    assert not is_arxiv_id(s), why


def test_an_id_that_is_not_a_string_is_refused() -> None:
    assert not is_arxiv_id(2606.19617)  # type: ignore[arg-type]


@pytest.mark.parametrize("s", [
    "cs.AI", "cs.LG", "math.GT", "hep-th", "quant-ph", "stat.ML", "eess.SY", "econ.EM",
    "physics.acc-ph", "cond-mat.str-el", "q-fin.ST", "astro-ph", "cmp-lg", "solv-int",
])
def test_categories_of_the_taxonomy_and_legacy_ones_are_known(s: str) -> None:
    assert is_category(s)


@pytest.mark.parametrize("s", [
    "", "cs", "cs.ai", "CS.AI", "cs.XX", "68T05", "I.2.7", "cs.AI ", "math", "physics",
    "cs.AI\x00",
])
def test_other_category_codes_are_unknown(s: str) -> None:
    assert not is_category(s)


@pytest.mark.parametrize("s", ["../../theme/templates/base", "2401.12345/../x", "hep-th/../x",
                               "2401.12345\n", " 2401.12345", "HEP-TH/9901001", "/9901001",
                               "hep-th//9901001", "2401.12345.html", None, 2401.12345])
def test_nothing_that_could_leave_a_folder_is_an_id(s: object) -> None:
    assert not is_arxiv_id(s)  # type: ignore[arg-type]


@pytest.mark.parametrize("s", ["../x", "cs.LG/", " cs.LG", None])
def test_nothing_that_could_leave_a_folder_is_a_category(s: object) -> None:
    assert not is_category(s)  # type: ignore[arg-type]
