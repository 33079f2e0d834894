"""Ordinary code and data that the redactor must leave alone: timestamps and dates, decimal
numbers and tables of them, and code whose names hold a secret's word (`token`, `tokenizer`)."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import found, leaves_each

pytestmark = pytest.mark.unit


TIMESTAMPS = [
    'ts = pd.Timestamp("20140517 09:00:00")',
    'rng = pd.date_range("20190311 06:00", "20190311 18:00", freq="2h")',
    'expected = ["1970-01-01T00:00:00.000000007", "1970-01-01T00:00:00.000000008"]',
    'np.datetime64("2001-09-30 12:45:10.000000321")',
    '    "2012-07-15 03:05:00.000004000",',
    'stamp = "2030/02/14 00:00:00.000000009"',
    "0 2021-03-04 10:15:00.041   AAPL   98.12",
    "1 2021-03-04 10:15:00.052   GOOG  711.40",
    'msg = "Out of bounds timestamp: 2299-11-08 21:13:05"',
    '@pytest.mark.parametrize("day", ["2400-03-01", "1500-06-30"])',
    'pd.Period("1600-01-01", freq="D")',
    'x = to_datetime("20170830 17:45:59.5")',
    '["2262-04-11 23:47:16.854775807"]',
    "2018-10-28 01:59:59.999999999+02:00    4",
    "2018-10-28 02:00:00.000000000+01:00    5",
    'when = "20221201 08:30"',
    "log line 2024-05-06 14:03:22.000123456 worker started",
    "    2016-02-29 07:00:00.000000001 -> leap",
    'ceil("1777-01-01 00:00:02.000000019", "10ns")',
    'Timestamp("19991231 23:59:59")',
]

DECIMALS = [
    "the measured lengths in mm (214.80331457, 199.7720113,",
    "    201.66130994, 188.03341226, 176.20019853, ...) are binned",
    "== '73129.00000'",
    "- 0.0009765625*SingularityFunction(x, 6, 2)",
    "assert str(expr.evalf(n=10)) == '0.8124356719 + 2.004411773*I'",
    "        0  0.142857  0.5\n        1  0.857143  0.5",
    "        a 0  2.333333  7.0\n          1  5.666667  9.0",
    "   3  1.250000  6.0\n   4  8.500000  2.0",
    "result 12345.6789012 after 40 iterations",
    "pi ~ 3.14159265358979",
    "weights: 0.0000152587890625",
    "(4410.25000000, 33.5)",
    "loss=0.69314718056 at step 1",
    "scale 1.7976931348 and eps 2.2204460492",
    "    0  4.250000  1.5\n    1  9.125000  3.5",
    "gamma = 0.5772156649015",
    "sqrt(2) = 1.41421356237",
    "  10  0.333333  0.666667",
    "mean 98765.4321098",
    "exp(1) == 2.718281828459",
]

CODE_NAMES = [
    "    api = get_api(token=token)",
    'info = whoami(token=token)["name"]',
    "client.open(job_id, token=token).close()",
    "        self._line_tokenizer = line_tokenizer",
    "        self.key_tokenizer = key_tokenizer",
    "    if keep_token:\n        token_set = _token_set",
    '    mapping = {"audio_token_id": "audio_token_index"}',
    '    "image_token_id": "image_token_index",',
    "    tokens_per_group = tokens_per_group_total / n_rows",
    "text = tok.batch_decode(ids, clean_up_tokenization_spaces=False)[0]",
    "decoded = tok.decode(out, skip_special_tokens=True)[0]",
    "    if config.token_pruning:\n        hidden = self.prune(hidden, mask)",
    "    if use_cls_token:\n        pos_table = torch.zeros(1, n, d)",
    "    if cfg.token_dropout:\n        drop_rate = cfg.rate * 2",
    "ByteTokenizerFast = ByteBackend",
    '    "lm.embed_tokens.weight": "shared.weight",',
    '    "DELETE_TOKEN_QUERY": ".queries",',
    "    step(x, max=3, dep_token=dep_token1)",
    "        token_mask = token_mask_full & valid",
    "        self.tokenizer_kwargs = tokenizer_kwargs",
]


# Timestamps and dates are no phones, decimal numbers neither; code names after a secret's word
# are no secrets.
test_timestamps_decimals_and_code_names_are_left = leaves_each(
    {"timestamp": TIMESTAMPS, "decimal": DECIMALS, "code_name": CODE_NAMES}
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("call me at 415.555.0134 after 10:30", "415.555.0134"),
        ("phone: 020 7946 0958", "020 7946 0958"),
        ("password=hunter2x python run.py", "hunter2x"),
        ("token=ghx_token_9f8a7b6c5d", "ghx_token_9f8a7b6c5d"),
        ('password: "correct_horse_battery_staple"', "correct_horse_battery_staple"),
        ("pw = s3cret_pa55 ", "s3cret_pa55"),
        ("api_key=abc123xyz [prod]", "abc123xyz"),  # an operator after it: still a value
        ("token=ghp_abc123 + 1", "ghp_abc123"),
    ],
)
def test_values_beside_those_shapes_are_still_found(text: str, value: str) -> None:
    assert found(text) == [value]
