"""The sites' one newest-first order and one all-words search."""

from __future__ import annotations

from benchwright.web.local_suite.listing import matching, newest_first


def test_newest_first_sorts_by_the_key_highest_first() -> None:
    assert newest_first(["000000102", "000000124", "000000111"], str) == [
        "000000124", "000000111", "000000102"]


def test_a_hit_holds_every_word_in_any_case_and_no_words_find_nothing() -> None:
    names = ["Glass Electric Kettle", "Stovetop Kettle", "Electric Fan"]
    assert matching("electric KETTLE", names, str) == ["Glass Electric Kettle"]
    assert matching("  ", names, str) == []
