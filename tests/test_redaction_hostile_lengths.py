"""Texts made to be slow: one fragment a finder reacts to, repeated over tens of kilobytes (a
line of thousands of labels, no line break in it). Each finder reads a bounded stretch around
each place it looks at, so the time grows with the text's length, not with its square: before
these bounds a 50 KB line of `password=` took 15 s, and of `pass: ` about 6."""

from __future__ import annotations

import string
import time

import pytest

from tests.helpers.redaction import grouped, seconds_to_find

pytestmark = pytest.mark.unit

SIZE = 50_000
# Measured at 50 KB on a 2-core machine: 0.2-0.6 s each now, 6-15 s before.
BOUND_S = 4.0

# (what starts the line, the fragment repeated after it).
FRAGMENTS = [
    ("", "pass: "),
    ("", "PASS: "),
    ("", "password="),
    ("", "password: "),
    ("", "Password: x"),
    # A number said in words without end (one run of the spoken view), and a card's word
    # before it.
    ("card ", "four two double five nine, "),
    # A key glued to `%09` again and again (each find was read on to the text's end: 14 s).
    ("", "api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc%09"),
]

# A text that holds an escape (`%41`) is read twice, as typed and decoded. A command's options
# are read up to where the command starts again, a Wi-Fi code's fields up to the next code, a
# `/user:` up to the next in its word: before, each was read again from every earlier one to
# the line's end, and these lines of one command repeated took 5-11 s at 50 KB.
HEADED = [
    ("net use %41 ", "/user:"),
    ("%41 ", "wmic "),
    ("%41 ", "lftp "),
    ("%41 ", "WIFI:"),
    ("%41 - ", "nxc "),
    ("%41 - ", "7z "),
    ("%41 - ", "curl "),
    ("%41 - ", "mysql "),
    # A capitalised word tens of kilobytes long after a first name, then a sign that ends no
    # name: a word read more than one way took seconds at 22 letters.
    ("Anna A", "b"),
    ("Anna ", "O'Bb-"),
    # Thousands of capitalised words on a line, or of names: each read a few words from where
    # it starts, each line asked once whether it is a title's (15 s at 50 KB before).
    ("", "Anna "),
    ("", "Anna Smith ="),
    ("%41 ", "Mr. Smith "),
]


@pytest.mark.parametrize(("head", "fragment"), grouped({"fragment": FRAGMENTS, "command": HEADED}))
def test_a_line_of_one_fragment_or_command_repeated_is_read_in_linear_time(
    head: str, fragment: str
) -> None:
    text = head + (fragment * (SIZE // len(fragment) + 1))[: SIZE - len(head)]
    assert seconds_to_find(text, time.process_time) < BOUND_S


# Found by a timing fuzz of every finder's words, patterns and tables: each read on from every
# place it starts to the text's end (a table's rows from every rule line, a statement's rows
# from every `COPY`, a Latin word through another script's letters, a name's word through a
# text without spaces, a command's options across lines the decoded view joins) or asked the
# same of the whole text again per token. At 100 KB these took 4.8-15 s before; now under 1.
TO_THE_END = [
    ("", "| a | b |\n|---|---|\n"),
    ("", "COPY a (a) FROM stdin;\n"),
    ("1 ", "A中"),
    ("%41 ", "هاتفATBB"),
    ("", "श्रीमती"),
    ("", "creds"),
    ("", "curl -u a:\n"),
    ("", "htpasswd\t \t-Wj\t\t\t -Av"),
    ("", "eyJ"),
    ("", "=eyJ"),
    ("", "onderwerphttp://a?b=&b=&b="),
    ("", "a@b.co\\t"),
    # A car's make, then capitals and spaces to the end (a plate's counts were looked ahead for
    # from every capital: 18 s); a line of names split by commas (each read its list again).
    ("Toyota ", "AB "),
    ("", "Anna, Maria, "),
    # A word of one first name's stem repeated, no space in it (each of its thousands of names
    # was read back to the word's start: 4 min).
    ("", "Дмитри"),
]


@pytest.mark.parametrize(("head", "fragment"), TO_THE_END)
def test_what_a_finder_reads_from_each_place_stops_short_of_the_texts_end(
    head: str, fragment: str
) -> None:
    size = 2 * SIZE
    text = head + (fragment * (size // len(fragment) + 1))[: size - len(head)]
    assert seconds_to_find(text, time.process_time) < BOUND_S


def test_a_town_of_hyphenated_capitals_is_read_one_way() -> None:
    # A postcode's town whose words a hyphen joins, then no comma: a first regex read it 2^n
    # ways (26 letters: 4.3 s; each more, twice that).
    text = "Address: Main St 5, 12345 " + "-".join(string.ascii_uppercase) + " (x)"
    assert seconds_to_find(text, time.process_time) < 0.5
