"""Phone numbers read with Google's libphonenumber data (`phonenumbers`): a number with `+` is
read as international; one without is read as a national number of each region in
`sampling.redact.phone_regions`, in order, and is a phone number when one of them has it."""

from __future__ import annotations

from collections.abc import Sequence

import phonenumbers
from phonenumbers import CountryCodeSource, NumberParseException, PhoneNumberType

from sampling.redaction.context import NamedBefore
from sampling.redaction.kinds import DEFAULT_PHONE_REGIONS

DEFAULT_REGIONS = DEFAULT_PHONE_REGIONS
_NATIONAL = CountryCodeSource.FROM_DEFAULT_COUNTRY
# Words that say a bare run of digits is a phone number ("call 4155550134", "电话4155550134").
PHONE_NAMED = NamedBefore(
    ("phone", "tel", "call", "cell", "mobile", "mob", "fax", "sms", "text me", "whatsapp",
     "wechat", "contact", "reach me", "dial", "ring", "number", r"no\.", "teléfono", "telefone",
     "telefon", "téléphone", "numéro", "电话", "手机", "号码", "联系", "致电", "热线", "微信",
     "座机", "电話", "携帯", "전화"),
    gap=20,
)  # fmt: skip


class PhoneReader:
    def __init__(self, regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        self.regions = tuple(regions)

    def international(self, candidate: str) -> bool:
        """`+CC ...`: a length some country's numbers have."""
        number = _parse(candidate, None)
        return number is not None and phonenumbers.is_possible_number(number)

    def national(self, candidate: str, *, grouped: bool, before: str) -> bool:
        """A number without `+`: written in groups, a valid number of one of the regions; a bare
        run of digits, a valid mobile number there (an 11-digit Chinese mobile, a UK 07...), or
        any valid number after a word that names a phone ("call", "电话")."""
        named = PHONE_NAMED.ends(before)
        for region in self.regions:
            number = _parse(candidate, region, keep_raw_input=True)
            # Read as the region's own number: libphonenumber also takes leading digits that
            # match a country code (447220624872 as +44), which a number without `+` is not.
            if number is None or number.country_code_source != _NATIONAL:
                continue
            if not phonenumbers.is_valid_number(number):
                continue
            if not (named or _as_written_there(number, candidate, region)):
                continue
            if grouped or named or phonenumbers.number_type(number) == PhoneNumberType.MOBILE:
                return True
        return False


def _as_written_there(number: phonenumbers.PhoneNumber, candidate: str, region: str) -> bool:
    """The digits are the number as its country writes it at home: its national format's, or
    its trunk prefix and the number (US 1-415-...). libphonenumber also reads a number without
    its trunk prefix (7700 900123 as the UK's 07700 900123), which no one there writes: an
    order number or an id, not a phone."""
    digits = "".join(char for char in candidate if char.isdigit())
    national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    if digits == "".join(char for char in national if char.isdigit()):
        return True
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    prefix = metadata.national_prefix if metadata is not None else None
    return bool(prefix) and digits == f"{prefix}{phonenumbers.national_significant_number(number)}"


def _parse(
    candidate: str, region: str | None, keep_raw_input: bool = False
) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(candidate, region, keep_raw_input=keep_raw_input)
    except NumberParseException:
        return None


def supported_region(code: str) -> bool:
    return code in phonenumbers.SUPPORTED_REGIONS
