"""A wallet's raw private key: 64 hex digits, with or without `0x`, as Bitcoin and Ethereum
wallets export a key (MetaMask's "Export private key"), where words in the 120 characters before
it (lines above included) name a private key in one of many languages ("my private key: ...",
"私钥：...", "gửi private key ... nhé: ..."), or given to a name whose last part is `pk`
(`wallet_pk = "0x..."`, `DEPLOYER_PK=...`). Alone, 64 hex digits are as often a SHA-256 digest
or a transaction's hash, and stay."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sampling.redaction.context import NamedBefore
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

NAMES = ("private key", "private_key", "privatekey", "priv key", "privkey", "priv_key",
         "私钥", "私鑰", "秘密鍵", "개인키", "개인 키", "clave privada", "chave privada",
         "clé privée", "cle privee", "chiave privata", "privater schlüssel",
         "privaten schlüssel", "приватный ключ", "закрытый ключ", "приватний ключ",
         "özel anahtar", "kunci pribadi", "kunci privat", "klucz prywatny", "privésleutel",
         "soukromý klíč", "khóa riêng", "khóa bí mật", "المفتاح الخاص", "מפתח פרטי",
         "निजी कुंजी", "प्राइवेट की")  # fmt: skip
_KEY = re.compile(r"(?<![0-9a-z+/])(?:0x)?[0-9a-f]{64}(?![0-9a-z+/])")  # (not inside base64)
# A name whose last part is `pk`, given a value: `wallet_pk = "`, `"pk": "`, `ETH_PK=`.
_PK_NAME = re.compile(r"(?:^|[^a-z0-9])(?:[a-z0-9]+[_.-])*pk[\"']?[ \t]*[:=][ \t]*[\"'`]?$")
_NEAR = 120  # characters before a key where its name may stand (the lines above included)
_NAMED = NamedBefore(NAMES, gap=_NEAR, between=rf"[\s\S]{{0,{_NEAR}}}")
# Words before a key on its line or the line above that say it is a digest: `sha256 <hex>`,
# `tx hash: 0x<hex>`, `$ sha256sum model.bin` over its output.
_DIGEST = re.compile(r"sha|hash|digest|checksum|txid|\btx\b|fingerprint|commit|hmac|signature")


@register("wallet_private_key")
class WalletKeyFinder:
    kinds = frozenset({"PRIVATE_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=(*NAMES, "pk"))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_word(64):
            return
        lower = view.lower
        for key in _KEY.finditer(lower):
            start = key.start()
            line_start = lower.rfind("\n", 0, start) + 1
            line_above = lower.rfind("\n", 0, max(line_start - 1, 0)) + 1
            if _PK_NAME.search(lower, line_start, start) is not None or (
                _DIGEST.search(lower, line_above if line_start else 0, start) is None
                and _NAMED.before(lower, start)
            ):
                yield Span(start, key.end(), "PRIVATE_KEY")
