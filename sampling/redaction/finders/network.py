"""Network identifiers: IPv4 and IPv6 addresses (checked by the standard library's ipaddress) and
hardware (MAC) addresses. An address that names no machine is left: loopback (`127.0.0.1`,
`::1`), unspecified (`0.0.0.0`, `::`), and a CIDR range's network address (`10.0.0.0/8`)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from sampling.redaction.checks import ascii_word_char, is_ipv4, is_ipv6
from sampling.redaction.context import matches
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

_PREFIX = re.compile(r"/(\d{1,3})(?!\d)")


def _names_a_machine(address: str, text: str, end: int) -> bool:
    """Not loopback, not unspecified, and not the network address of the CIDR range written
    after it (`10.0.0.0/8`, `2001:db8::/32`: the host's bits all zero); `/32` is one host."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_loopback:
        return False
    prefix = _PREFIX.match(text, end)
    if prefix is not None and int(prefix.group(1)) < ip.max_prefixlen:
        host_bits = ip.max_prefixlen - int(prefix.group(1))
        return int(ip) & ((1 << host_bits) - 1) != 0
    return True


@register("ip")
class IpFinder:
    kinds = frozenset({"IP_ADDRESS"})
    priority = PERSONAL_PRIORITY
    # An IPv4 address's middle (`0.113.4`), an IPv6 address's `x:y:` core.
    triggers = Triggers(shapes=(rb"[0-9]\.[0-9]{1,3}\.[0-9]", rb":[0-9a-f]{0,4}:"))
    views = ALL_VIEWS
    _V4 = re.compile(
        r"[0-9](?<![\w.][0-9])\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)", re.ASCII
    )
    # A word that names four numbers as a release (`version 2.4.1.0`, `Version: 1.2.3.4`,
    # `build 6.1.7601.2`, `firmware v4.1.20.3`), right before them.
    _VERSION_BEFORE = re.compile(
        r"(?i:(?<![a-z])(?:version|ver\.?|release|build|firmware|driver|versión|versão|versione"
        r"|versie|wersja|verze|verzió|versiune|sürüm|sürümü|versjon|versio|phiên bản|versi|релиз"
        r"|версия|версія|έκδοση|גרסה|الإصدار|نسخه|संस्करण|เวอร์ชัน|版本|バージョン|버전)(?![a-z]))"
        r"[ \t]*(?:(?:number|no\.?|is|:|=|#)[ \t]*)?v?$"
    )
    # IPv6: found from its `x:y:` core, then widened to the whole run of hex digits, `:` and `.`.
    _V6_CORE = re.compile(r":[0-9A-Fa-f]{0,4}:")
    _V6_CHARS = frozenset("0123456789abcdefABCDEF:.")

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if view.has_dotted_number():
            for match in self._V4.finditer(text):
                if self._VERSION_BEFORE.search(text, max(0, match.start() - 24), match.start()):
                    continue  # `version 2.4.1.0`, `Build 10.0.19045.3693`: a release
                if is_ipv4(match.group()) and _names_a_machine(match.group(), text, match.end()):
                    yield Span(match.start(), match.end(), "IP_ADDRESS")
        first = text.find(":")  # two colons at least: two memchr, not a count of the text
        if first >= 0 and text.find(":", first + 1) >= 0:
            yield from self._v6(text)

    def _v6(self, text: str) -> Iterator[Span]:
        chars, done = self._V6_CHARS, -1
        for match in self._V6_CORE.finditer(text):
            if match.start() < done:
                continue
            start, end = match.start(), match.end()
            while start > 0 and text[start - 1] in chars:
                start -= 1
            while end < len(text) and text[end] in chars:
                end += 1
            done = end
            value = text[start:end].strip(".")
            if value.startswith(":") and not value.startswith("::"):
                value = value[1:]  # a label's colon before it (`IPv6地址：2001:db8::1`)
            start = text.index(value, start) if value else start
            end = start + len(value)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if ascii_word_char(before) or ascii_word_char(after):
                continue
            if is_ipv6(value) and _names_a_machine(value, text, end):
                yield Span(start, end, "IP_ADDRESS")


@register("mac")
class MacFinder:
    """Hardware (MAC) addresses, a device's lasting identifier: six pairs of hex digits joined
    by one separator, `:` or `-` (`00:1A:2B:3C:4D:5E`), not inside a longer run of them."""

    kinds = frozenset({"MAC_ADDRESS"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[0-9a-f]{2}[:\-](?:[0-9a-f]{2}[:\-]){4}[0-9a-f]{2}",))
    views = ALL_VIEWS
    _MAC = re.compile(
        # Not inside a longer run of pairs; a label's colon before it (`MAC:00:1A:...`) is fine.
        r"(?<![0-9A-Fa-f])(?<![0-9A-Fa-f][:-])[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}"
        r"[0-9A-Fa-f]{2}"
        r"(?![0-9A-Fa-f]|[:-][0-9A-Fa-f])"
    )

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if text.count(":") < 5 and text.count("-") < 5:  # five separators in every one
            return
        yield from matches(self._MAC, text, "MAC_ADDRESS")
