"""The feed checkers pass a valid document and name what is wrong with a broken one."""

from __future__ import annotations

import pytest

from tests.feedcheck import atom_errors, opml_urls, rss_errors

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>PaperTrail</title>
  <link href="https://example.org/" rel="alternate"/>
  <link href="https://example.org/feeds/all.atom.xml" rel="self"/>
  <id>tag:example.org,2026:feed/all</id>
  <updated>2026-06-26T01:00:00+00:00</updated>
  <author><name>PaperTrail</name></author>
  <entry>
    <title>A paper</title>
    <link href="https://example.org/paper/2606.00001.html" rel="alternate"/>
    <id>tag:example.org,2026:paper/2606.00001</id>
    <updated>2026-06-26T01:00:00Z</updated>
    <summary type="html">&lt;p&gt;Abstract&lt;/p&gt;</summary>
  </entry>
</feed>
"""

RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>PaperTrail</title>
    <link>https://example.org/</link>
    <description>New papers</description>
    <atom:link href="https://example.org/feeds/all.rss.xml" rel="self"/>
    <lastBuildDate>Fri, 26 Jun 2026 01:00:00 +0000</lastBuildDate>
    <item>
      <title>A paper</title>
      <link>https://example.org/paper/2606.00001.html</link>
      <description>&lt;p&gt;Abstract&lt;/p&gt;</description>
      <dc:creator>Ada Lovelace</dc:creator>
      <pubDate>Fri, 26 Jun 2026 01:00:00 +0000</pubDate>
      <guid>https://example.org/paper/2606.00001.html</guid>
    </item>
  </channel>
</rss>
"""


def atom(old: str = "", new: str = "") -> list[str]:
    assert old in ATOM
    return atom_errors(ATOM.replace(old, new).encode())


def rss(old: str = "", new: str = "") -> list[str]:
    assert old in RSS
    return rss_errors(RSS.replace(old, new).encode())


def one_error_naming(errors: list[str], *words: str) -> None:
    assert errors, "the checker passed a broken document"
    assert any(all(w in e for w in words) for e in errors), errors


def test_a_minimal_atom_feed_passes():
    assert atom() == []


def test_foreign_elements_in_atom_pass_as_rfc_4287_allows():
    dc = '<dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">Ada</dc:creator>'
    media = '<m:thumbnail xmlns:m="http://search.yahoo.com/mrss/" url="https://example.org/t"/>'
    assert atom("<title>A paper</title>", f"<title>A paper</title>{dc}{media}") == []


def test_an_atom_feed_without_id_fails():
    one_error_naming(atom("<id>tag:example.org,2026:feed/all</id>"), "feed", "atom:id")


def test_a_relative_atom_id_fails():
    one_error_naming(atom("tag:example.org,2026:feed/all", "feeds/all"), "absolute IRI")


@pytest.mark.parametrize("date", ["yesterday", "2026-06-26T01:00:00", "2026-06-26t01:00:00Z"])
def test_a_bad_atom_date_fails(date):
    one_error_naming(atom("2026-06-26T01:00:00Z", date), "line 13", "updated")


def test_a_date_without_time_zone_is_named_as_not_rfc_3339():
    one_error_naming(atom("2026-06-26T01:00:00Z", "2026-06-26T01:00:00"), "RFC 3339")


def test_an_entry_with_neither_content_nor_alternate_link_fails():
    errors = atom('<link href="https://example.org/paper/2606.00001.html" rel="alternate"/>')
    one_error_naming(errors, "line 9", "atom:content", "alternate")


def test_an_entry_with_content_needs_no_alternate_link():
    assert atom('<link href="https://example.org/paper/2606.00001.html" rel="alternate"/>',
                "<content>Abstract</content>") == []


def test_an_atom_feed_without_self_link_fails():
    one_error_naming(atom('<link href="https://example.org/feeds/all.atom.xml" rel="self"/>'),
                     "self")


def test_an_entry_without_author_fails_when_the_feed_has_none():
    one_error_naming(atom("<author><name>PaperTrail</name></author>"), "atom:author")


def test_two_alternate_links_of_one_type_and_language_fail():
    second = '<link href="https://example.org/other" rel="alternate"/>'
    one_error_naming(atom("<title>A paper</title>", f"<title>A paper</title>{second}"),
                     "second", "alternate")


def test_broken_xml_is_reported_not_raised():
    one_error_naming(atom_errors(b"<feed>"), "not well-formed")


def test_a_minimal_rss_feed_passes():
    assert rss() == []


def test_an_rss_channel_without_link_fails():
    one_error_naming(rss("<link>https://example.org/</link>"), "channel", "link")


def test_a_relative_rss_item_link_fails():
    one_error_naming(rss("https://example.org/paper/2606.00001.html</link>",
                         "paper/2606.00001.html</link>"), "absolute")


@pytest.mark.parametrize("date", ["2026-06-26", "Fri, 26 Jun 26 01:00:00 +0000"])
def test_a_bad_rss_pub_date_fails(date):
    one_error_naming(rss("<pubDate>Fri, 26 Jun 2026 01:00:00 +0000", f"<pubDate>{date}"),
                     "pubDate", "RFC 822")


def test_a_guid_that_is_no_permalink_need_not_be_a_url():
    assert rss("<guid>https://example.org/paper/2606.00001.html",
               '<guid isPermaLink="false">tag:example.org,2026:paper/2606.00001') == []


def test_a_permalink_guid_must_be_a_url():
    one_error_naming(rss("https://example.org/paper/2606.00001.html</guid>",
                         "tag:example.org,2026:paper/2606.00001</guid>"), "guid", "permalink")


def test_an_rss_item_without_guid_fails():
    one_error_naming(rss("<guid>https://example.org/paper/2606.00001.html</guid>"), "guid")


def test_an_rss_channel_without_self_link_fails():
    one_error_naming(rss('<atom:link href="https://example.org/feeds/all.rss.xml" rel="self"/>'),
                     "atom:link", "self")


def test_an_unknown_plain_element_in_an_rss_item_fails():
    one_error_naming(rss("<dc:creator>Ada Lovelace</dc:creator>", "<creator>Ada</creator>"),
                     "item", "<creator>")


def test_an_undeclared_dc_prefix_fails():
    one_error_naming(rss('\n     xmlns:dc="http://purl.org/dc/elements/1.1/"'), "dc")


def test_a_misspelled_dc_namespace_fails():
    one_error_naming(rss("http://purl.org/dc/elements/1.1/", "http://purl.org/dc/elements/1.1"),
                     "dc:creator", "http://purl.org/dc/elements/1.1/")


def test_an_rss_0_91_root_fails():
    one_error_naming(rss('version="2.0"', 'version="0.91"'), "rss", "2.0")


def test_opml_urls_lists_the_outlines_feeds():
    opml = b"""<?xml version="1.0" encoding="utf-8"?>
<opml version="2.0"><head><title>PaperTrail</title></head><body>
  <outline text="All" type="rss" xmlUrl="https://example.org/feeds/all.rss.xml"/>
  <outline text="Topics"><outline text="LLM" xmlUrl="https://example.org/t.atom.xml"/></outline>
</body></opml>"""
    assert opml_urls(opml) == ["https://example.org/feeds/all.rss.xml",
                               "https://example.org/t.atom.xml"]


def test_opml_urls_refuses_what_is_not_opml_2():
    with pytest.raises(ValueError, match="opml"):
        opml_urls(b'<opml version="1.0"><body/></opml>')
