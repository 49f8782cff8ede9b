

def test_a_title_cut_before_is_cut_with_one_ellipsis() -> None:
    """A root-cause title already capped, composed into a headline and capped again: one ellipsis."""
    from ad_diff.core.headline import ELLIPSIS, cap_text

    title = cap_text("word " * 60)
    headline = cap_text(f"FAIL: 1 root cause ({title})")
    assert headline.count(ELLIPSIS) == 1
    assert len(headline) <= 160


def test_no_headline_of_a_scenario_holds_two_ellipses() -> None:
    """Every scenario report's headline (the verdict, with a root cause's title cut inside it)."""
    import json

    from ad_diff.core.headline import ELLIPSIS
    from tests.conftest import FIXTURES

    reports = sorted(FIXTURES.glob("scenarios/*/expected/report.json"))
    assert reports
    for path in reports:
        data = json.loads(path.read_text())
        for text in [data["headline"], *(g["title"] for g in data["groups"])]:
            assert ELLIPSIS * 2 not in text, path
            assert len(text) <= 160, path
