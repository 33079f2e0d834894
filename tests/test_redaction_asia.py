"""Personal data as people in China, Japan, Korea, India and South-East Asia type it: names with
their titles, honorifics and labels, addresses by their local units, identity cards whose checks
python-stdnum lacks, chat-app IDs and plates as they are written there, and the look-alikes
(a title after a common word, a timestamp) that must stay."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sampling.redaction.finders import table
from sampling.redaction.finders.identity import is_hkid, is_sg_nric, is_twid
from tests.helpers.redaction import grouped, leaves_each, redacted

pytestmark = pytest.mark.unit
NAMES = table("cjk_names.json")

# (text, the value in it), by the value's kind.
PERSONAL_DATA = {
    "PHONE": [
        # A mobile number's shape with a digit repeated, its last digit another: no amount.
        ("すみません、Try 16166666662です and tell me if it works.", "16166666662"),
    ],
    "PERSON_NAME": [
        # A Latin name signing off, glued to the Korean words after it.
        (
            "안녕하세요, Thanks.\n\nBest regards,\nSiobhan O'Brien입니다 감사합니다.",
            "Siobhan O'Brien",
        ),
        # Chinese names: a title after, a label or greeting before.
        ("尊敬的王伟先生：您好！您的订单已发货。", "王伟"),
        ("刘洋女士您好，附件是合同。", "刘洋"),
        ("致李娜：\n感谢您的来信。", "李娜"),
        ("联系人：张三，电话见下。", "张三"),
        ("收货人：诸葛明亮", "诸葛明亮"),
        ("请转告赵立新经理，会议改到下午三点。", "赵立新"),
        ("亲爱的陈静，生日快乐！", "陈静"),
        ("尊敬的王\u200b伟先生", "王\u200b伟"),
        # Japanese: a family name (and a given name) with an honorific, or after a label.
        ("田中太郎様\nいつもお世話になっております。", "田中太郎"),
        ("佐藤さん、明日の会議の資料です。", "佐藤"),
        ("担当：中村健", "中村健"),
        # After a courier's or a passenger's word; before a parent's word; after a form's
        # label and its spaces; before a parent's word in Korean, and a particle after a name.
        ("您的快件已由快递员张建国（电话见下）派送中", "张建国"),
        ("订单确认：乘机人 刘思远，证件类型 身份证", "刘思远"),
        ("各位家长好，我是李明轩的妈妈，周六春游的AA费用每人80元", "李明轩"),
        ("氏名\u3000佐々木 美咲（ささき みさき）", "佐々木 美咲"),
        ("[김지훈 아빠] [오후 8:14] 내일 픽업은 제가 할게요~", "김지훈"),
        ("월세는 매달 25일까지 예금주 박상철로 보내주세요.", "박상철"),
        # Korean: a surname and two syllables with an honorific, or after a label.
        ("김민수님, 주문하신 상품이 발송되었습니다.", "김민수"),
        ("최수진 씨에게 전달해 주세요.", "최수진"),
        ("받는 사람: 강하늘", "강하늘"),
    ],
    "ADDRESS": [
        # Addresses: a lane, a section, a housing estate's building and unit; Japan without its
        # prefecture; Korea by road and by neighbourhood.
        (
            "我家住上海市徐汇区漕溪北路595弄3号1202室。",
            "上海市徐汇区漕溪北路595弄3号1202室",
        ),
        ("地址:成都市武侯区天府大道北段1700号", "成都市武侯区天府大道北段1700号"),
        ("送到朝阳区望京西园四区412号楼2单元801", "朝阳区望京西园四区412号楼2单元801"),
        ("福岡市中央区天神1丁目8-1までお届けください", "福岡市中央区天神1丁目8-1"),
        ("주소: 서울특별시 강남구 테헤란로 152", "서울특별시 강남구 테헤란로 152"),
        ("부산광역시 해운대구 우동 1408-5 으로", "부산광역시 해운대구 우동 1408-5"),
        (
            "公司在北京市海淀区中关村大街B座1203 100080",
            "北京市海淀区中关村大街B座1203 100080",
        ),
        ("住所：東京都千代田区丸の内1-9-1 グランハイツ302号室", "グランハイツ302号室"),
    ],
    "NATIONAL_ID": [
        # Identity cards: Hong Kong and Singapore on their checks, Taiwan and Vietnam named.
        ("香港身份證號碼：A123456(3)", "A123456(3)"),
        ("NRIC: S1234567D", "S1234567D"),
        ("身分證字號：A123456789", "A123456789"),
        ("Số CCCD: 079203001234", "079203001234"),
        # Numbers of stdnum's table under the names people use for them.
        ("주민번호 900101-1234568 입니다", "900101-1234568"),
        ("IC saya 900101-14-5671", "900101-14-5671"),
        ("เลขบัตรประชาชน 1101700230678", "1101700230678"),
    ],
    "MESSENGER_ID": [
        # Chat-app IDs as they are typed: an alias, a space alone, Japanese particles.
        ("vx：lily2024 备注来意", "lily2024"),
        ("加我微信 zhangsan_88", "zhangsan_88"),
        ("扣扣 987654321", "987654321"),
        ("LINEのIDはyuki.sです", "yuki.s"),
        ("카톡 jisoo_k 로 연락주세요", "jisoo_k"),
    ],
    "LICENSE_PLATE": [
        # Plates by their shape alone.
        ("我的车粤B12345被贴条了", "粤B12345"),
        ("ナンバー：品川 300 あ 12-34", "品川 300 あ 12-34"),
        ("제 차는 12가 3456 입니다", "12가 3456"),
        ("제 차 번호는 34나 5678입니다", "34나 5678"),
    ],
}


@pytest.mark.parametrize(("kind", "text", "value"), grouped(PERSONAL_DATA, name_first=True))
def test_asian_personal_data_is_redacted(kind: str, text: str, value: str) -> None:
    out, counts = redacted(text)
    assert value not in out and kind in counts, out


test_look_alikes_stay = leaves_each(
    [
        "我的高中老师明天来。",  # a common word before a title
        "项目经理和英语老师都到了。",
        "王先生这个称呼很常见。",  # a surname alone
        "尊敬的客户，您好！",
        "亲爱的同学们，新学期开始了。",
        "致全体员工：",
        "感冒可能导致高烧。",  # 致 inside a word, a surname's character after it
        "联系人：客服部",
        "이사장님께서 말씀하셨다.",  # a title of three syllables
        "변호사님과 상담했습니다.",
        "고객님 감사합니다.",
        "이름 모를 꽃",
        "お客様各位",
        "2026-12-06 14:30:00 系统维护",  # a timestamp, not a phone
        "서울시 인구 1000만",
        "이번 학기는 20주 1000명이 들었다.",
        "京A牌照的车辆限行。",
        "我的妈妈很好。他的爸爸是老师。大家的家长都来了。",  # a parent's word after no name
        "우리 아빠는 회사에 가요.",
    ]
)


def test_a_word_before_the_name_that_is_also_a_surname_stays() -> None:
    assert redacted("关于胡斌老师的课，谢谢李娜老师。")[0] == (
        "关于<PERSON_NAME_1>老师的课，谢谢<PERSON_NAME_2>老师。"
    )


def test_a_korean_plate_takes_a_region_before_it_and_not_a_word() -> None:
    assert redacted("제 차는 12가 3456 입니다")[0] == "제 차는 <LICENSE_PLATE_1> 입니다"
    assert redacted("번호판: 서울 34나 5678")[0] == "번호판: <LICENSE_PLATE_1>"


def test_the_card_checks_take_their_published_examples() -> None:
    assert is_hkid("A123456(3)") and is_hkid("A1234563") and not is_hkid("A123456(4)")
    assert is_twid("A123456789") and not is_twid("A123456788")
    assert is_sg_nric("S1234567D") and not is_sg_nric("S1234567A")


_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉玲燕琳斌宇浩凯婷雪慧颖倩晨阳"
_SURNAMES = NAMES["cn_surnames"][:120]
_TEMPLATES = ("{}您好，附件是合同。", "请转告{}，会议改到三点。", "今天{}不在。", "麻烦{}看一下这个问题。",
              "会议由{}主持。", "{}：您的快递到了。")  # fmt: skip
_NOT_GIVEN_NAMES = frozenset(NAMES["not_given_names"])


@settings(max_examples=200, deadline=None)
@given(
    surname=st.one_of(
        st.sampled_from(list(_SURNAMES)), st.sampled_from(NAMES["cn_compound_surnames"][:10])
    ),
    given_name=st.text(_GIVEN, min_size=1, max_size=2),
    title=st.sampled_from(["先生", "女士", "小姐", "老师", "经理", "医生", "教授", "律师", "主任"]),
    template=st.sampled_from(_TEMPLATES),
)
def test_any_surname_and_given_name_before_a_title_is_redacted_and_nothing_else(
    surname: str, given_name: str, title: str, template: str
) -> None:
    name = surname + given_name
    assume(name[:2] not in _NOT_GIVEN_NAMES)
    assume(not (template.startswith("会议由") and surname == "于"))  # 由于 reads "because"
    text = template.format(name + title)
    out, counts = redacted(text)
    assert out == template.format("<PERSON_NAME_1>" + title), out
    assert counts == {"PERSON_NAME": 1}
