"""Secrets and personal data in the forms people type and tools print (request headers, config
files of Android, Helm and .NET, Windows and Oracle command lines, addresses written out in
several languages, typos), and the look-alikes in the same forms that must stay: the ids APIs
give their objects, logins on a host, placeholders, versions."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import random
import string

import pytest

from sampling.redaction.randomness import looks_random, reads_as_a_name, unnamed_secret
from tests.helpers.redaction import REDACTOR, found, hidden, hides_each, leaves_each

pytestmark = pytest.mark.unit


FOUND = [
    # A login's cookie in a request or a response, whatever the framework calls it.
    (
        "Cookie: _ga=GA1.2.123.456; session=.eJwlj0FqAzEMRe_itRcjWbJsX6YkQiZgmkJI2pAU3NvX0KXfB-8n_OXLXA7VDn8o7_f1yv3I_NvvO-O-HuIGUS1lIp0USsOVLrDbDi1hkjYD5GTaMOgq4G2ZiOlxmGpC5cdxqOrlXqnPq89Y6_jmr6Gvp3z_gN8gT-p0ZE7lGPY7Kzlp12Y9R1iUhwW4tf6JwEzVbvhz5BD5ALh5tsP5XvrGhkZf0P",
        ".eJwlj0FqAzEMRe_itRcjWbJsX6YkQiZgmkJI2pAU3NvX0KXfB-8n_OXLXA7VDn8o7_f1yv3I_NvvO-O-HuIGUS1lIp0USsOVLrDbDi1hkjYD5GTaMOgq4G2ZiOlxmGpC5cdxqOrlXqnPq89Y6_jmr6Gvp3z_gN8gT-p0ZE7lGPY7Kzlp12Y9R1iUhwW4tf6JwEzVbvhz5BD5ALh5tsP5XvrGhkZf0P",
    ),
    (
        "Set-Cookie: _shop_session=dHlwZTJzdW1tZXJzdHJpbmdvZnJhbmRvbWJ5dGVzZm9yYXJhaWxzc2Vzc2lvbmNvb2tpZXRoYXRpc2xvbmdlbm91Z2g0Nw%3D%3D--9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2; path=/; HttpOnly",
        "dHlwZTJzdW1tZXJzdHJpbmdvZnJhbmRvbWJ5dGVzZm9yYXJhaWxzc2Vzc2lvbmNvb2tpZXRoYXRpc2xvbmdlbm91Z2g0Nw%3D%3D--9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2",
    ),
    (
        "Set-Cookie: __Secure-next-auth.session-token=q9Vb2Lm4Xk7Tz1Pn; Path=/; HttpOnly",
        "q9Vb2Lm4Xk7Tz1Pn",
    ),
    # A Groovy, Gradle or Ruby call without brackets that gives a secret's name its value.
    (
        "signingConfigs {\n    release {\n        storePassword 'andr0idStore!'\n        keyPassword \"andr0idKey!\"\n    }\n}",
        "andr0idStore!",
    ),
    ('signingConfigs {\n    release {\n        keyPassword "andr0idKey!"\n    }\n}', "andr0idKey!"),
    ("user 'deploy' do\n  password 'ch3fUserPw'\nend", "ch3fUserPw"),
    # Windows' `net use` with the password after the share, and Oracle's JDBC URL.
    ("NET USE Y: \\\\srv02\\hr P@yroll99 /USER:HR\\svc_payroll", "P@yroll99"),
    ("net use \\\\nas01\\share Bkp$ecure9 /user:admin", "Bkp$ecure9"),
    # A share whose name starts like an escape (`\\f`, `\\n`, `\\t`): a path, not a form feed;
    # in JSON its backslashes are doubled, and decoded.
    # The attribute of a secret's object that holds it, or a random value.
    ('token.value = "Xk3vP9qLm2Rt7Ws4"', "Xk3vP9qLm2Rt7Ws4"),
    ('config.token.refresh = "Zq8vLw3NbX7kPr2Tm5Yd"', "Zq8vLw3NbX7kPr2Tm5Yd"),
    # `;` and `=` in a password after a label's colon: its own characters, not a next field.
    ("password: 0;A=", "0;A="),
    ("Password: ab;Cd=9x!", "ab;Cd=9x!"),
    ("net use Z: \\\\fs\\finance S3cretPw9 /user:ops", "S3cretPw9"),
    ("net use \\\\nas\\new\\team Hunter2pw! /user:corp\\ops", "Hunter2pw!"),
    ('{"cmd": "net use \\\\\\\\fs\\\\finance S3cretPw9 /user:ops"}', "S3cretPw9"),
    ("url=jdbc:oracle:thin:scott/Tiger9876@//orahost:1521/ORCLPDB1", "Tiger9876"),
    # Typos of the word for a password.
    ("pasword: tr0ub4dor&3", "tr0ub4dor&3"),
    ("passwrd=Qwerty!2345", "Qwerty!2345"),
    ("credentials -> admin:Sup3r$3cret", "Sup3r$3cret"),
    # Addresses written out in the words of other languages.
    ("escreva para joao.pereira arroba gmail ponto com", "joao.pereira arroba gmail ponto com"),
    ("mi correo es ana.ruiz arroba hotmail.es", "ana.ruiz arroba hotmail.es"),
    ("E-Mail: max.mueller (at) web (punkt) de", "max.mueller (at) web (punkt) de"),
    (
        "écrivez-moi : claire.martin (arobase) orange (point) fr",
        "claire.martin (arobase) orange (point) fr",
    ),
    ("email me at r.singh[@]zoho[.]in", "r.singh[@]zoho[.]in"),
    # Phones after the words Portuguese, Indonesian and Polish speakers use.
    ("Me liga no (21) 99876-5432 depois das 18h.", "(21) 99876-5432"),
    ("Hubungi saya di 0812-3456-7890 ya.", "0812-3456-7890"),
    ("tel. kom. 512-345-678", "512-345-678"),
    # A date of birth with an ordinal day, and in Indonesian.
    ("my date of birth is july 4th 1992", "july 4th 1992"),
    ("Tanggal lahir: 12-08-1994", "12-08-1994"),
    # A secret with an object id's prefix is still found where it is named: a prefix says what
    # an id is only where nothing names the run as a secret.
    ("token: call_Xk9Lm2Np4Qr6St8Uv0Wx2Yz1", "call_Xk9Lm2Np4Qr6St8Uv0Wx2Yz1"),
    ("and then sk_live_9Xk2Lm4Np6Qr8St0Uv2Wx4Yz6Ab here", "sk_live_9Xk2Lm4Np6Qr8St0Uv2Wx4Yz6Ab"),
    # Streets as Indonesia, Turkey, the Arab countries and India write them: the type, the name
    # and the number after `No.`, `No:`, `رقم`; a house's and a lane's numbers.
    ("Alamat saya Jl. Kemang Raya No. 27B, Jakarta", "Jl. Kemang Raya No. 27B"),
    ("kirim ke Jalan Sudirman No. 5 ya", "Jalan Sudirman No. 5"),
    ("Kirim paketnya ke Jl. Cendrawasih Raya No. 14A, Makassar ya", "Jl. Cendrawasih Raya No. 14A"),
    ("alamat kantor: jl. merdeka barat no 9 jakarta pusat", "jl. merdeka barat no 9"),
    ("Rumah saya di Gg. Mawar No. 3 RT 02/RW 05", "Gg. Mawar No. 3 RT 02/RW 05"),
    (
        "Kantor pindah ke Jalan Gatot Subroto Kav. 52-53 mulai Senin",
        "Jalan Gatot Subroto Kav. 52-53",
    ),
    ("Adres Gül Sok. No:12/3 Kadıköy", "Gül Sok. No:12/3"),
    ("Atatürk Cad. No: 45 adresine gel", "Atatürk Cad. No: 45"),
    ("Kargoyu Bağdat Cad. No: 215/7 Kadıköy adresine gönderin", "Bağdat Cad. No: 215/7"),
    ("Yeni evim Moda Mah. Şair Nefi Sok. No:8 D:4", "Moda Mah. Şair Nefi Sok. No:8 D:4"),
    ("Ofis: 1453. Sokak No 7 Bornova", "1453. Sokak No 7"),
    ("أسكن في 15 شارع النزهة بالقاهرة", "15 شارع النزهة"),
    ("نسكن في 42 شارع الجمهورية وسط البلد", "42 شارع الجمهورية"),
    ("المكتب في طريق الملك عبدالله، رقم 7 عمارة 3", "طريق الملك عبدالله، رقم 7 عمارة 3"),
    ("الشحنة إلى شارع التحلية 118 شقة 4", "شارع التحلية 118 شقة 4"),
    ("मेरा घर मकान नं. 221, गली नं. 4 में है", "मकान नं. 221, गली नं. 4"),
    ("पार्सल फ्लैट नंबर 12, ब्लॉक 3 पर भेजना", "फ्लैट नंबर 12, ब्लॉक 3"),
    ("हमारा पता गली नं. 7, मकान नं. 45 है", "गली नं. 7, मकान नं. 45"),
    ("Send it to H.No. 221, Gali No. 4, near the temple", "H.No. 221, Gali No. 4"),
    # Addresses as Colombia's grid writes them: the street's type and number, `#` or `No.` and
    # the crossing street's number with the distance from its corner; a quadrant and a flat.
    ("envíelo a la Carrera 70 # 32B-14 por favor", "Carrera 70 # 32B-14"),
    ("Queda en la Cra. 7 #72-41, piso 3", "Cra. 7 #72-41"),
    ("la oficina está en Diagonal 40A Bis # 21-30", "Diagonal 40A Bis # 21-30"),
    ("Transversal 5 # 8-12 int. 3, Medellín", "Transversal 5 # 8-12 int. 3"),
    ("Recoger en Cl 26 Sur No. 12-40 a las 5", "Cl 26 Sur No. 12-40"),
    ("mándalo a la calle 10 n° 4-51 apartamento 201", "calle 10 n° 4-51 apartamento 201"),
    ("nos vemos en la Tv. 93 # 51-98 torre 2", "Tv. 93 # 51-98"),
    ("llegue a la Dg. 68D Sur # 49F-70", "Dg. 68D Sur # 49F-70"),
    ("Cra. 43A #1 Sur-100 en Medellín", "Cra. 43A #1 Sur-100"),
    ("la cita es en Calle 100 # 19-54 Of. 801", "Calle 100 # 19-54 Of. 801"),
    # Hebrew: the type with a prefix letter glued to it, the name, the number, the flat.
    ("אני גר ברחוב הרצל 45, דירה 4", "רחוב הרצל 45, דירה 4"),
    ("תשלחו לרחוב ביאליק 12 בבקשה", "רחוב ביאליק 12"),
    ("הכתובת שלי רחוב אבן גבירול 102 דירה 7 תל אביב", "רחוב אבן גבירול 102 דירה 7"),
    ("המשרד בשד' רוטשילד 12, קומה 3", "שד' רוטשילד 12"),
    ("אני גרה ברחוב המלך ג'ורג' 20", "רחוב המלך ג'ורג' 20"),
    # Persian: street, alley, then the plaque's number and the unit, in Persian digits too.
    (
        "آدرس من: تهران، خیابان ولیعصر، کوچه نیلوفر، پلاک ۱۲، واحد ۳",
        "خیابان ولیعصر، کوچه نیلوفر، پلاک ۱۲، واحد ۳",
    ),
    ("بسته را به بلوار کشاورز، پلاک ۴۵ بفرستید", "بلوار کشاورز، پلاک ۴۵"),
    ("خانه ما خیابان آزادی کوچه ۵ پلاک ۷ است", "خیابان آزادی کوچه ۵ پلاک ۷"),
    # Urdu and Bengali: a house's number, then a lane's, a road's or a block's.
    ("میرا پتہ مکان نمبر 27، گلی نمبر 4، لاہور", "مکان نمبر 27، گلی نمبر 4"),
    ("ہم گلی نمبر 9، مکان نمبر 113 میں رہتے ہیں", "گلی نمبر 9، مکان نمبر 113"),
    ("پلاٹ نمبر ۴۵، فیز 6", "پلاٹ نمبر ۴۵، فیز 6"),
    ("আমার ঠিকানা বাড়ি ১২, রোড ৭, ধানমন্ডি", "বাড়ি ১২, রোড ৭"),
    ("পার্সেল বাসা নং ৪৫, রোড নং ৩ এ পাঠান", "বাসা নং ৪৫, রোড নং ৩"),
    ("ফ্ল্যাট ৪বি, বাড়ি ২৩, সড়ক ১১", "ফ্ল্যাট ৪বি, বাড়ি ২৩, সড়ক ১১"),
    # Thai: the house's number with its slash, the village, the lane and sub-lane, the road.
    ("ที่อยู่ 55/12 ซอยลาดพร้าว 101 แยก 7 กรุงเทพ", "55/12 ซอยลาดพร้าว 101 แยก 7"),
    ("ส่งของมาที่ 99/1 หมู่ 3 ถนนพหลโยธิน", "99/1 หมู่ 3 ถนนพหลโยธิน"),
    ("บ้านเลขที่ 12 ถนนสุขุมวิท ซอย 11", "บ้านเลขที่ 12 ถนนสุขุมวิท ซอย 11"),
    ("เลขที่ 88/8 หมู่ 5 ต.บางพูด อ.ปากเกร็ด จ.นนทบุรี", "เลขที่ 88/8 หมู่ 5 ต.บางพูด อ.ปากเกร็ด จ.นนทบุรี"),
    # Malaysia: the number before `Jalan`, a township's code and slash in the name.
    ("Hantar ke No. 23, Jalan SS 2/64, Petaling Jaya", "No. 23, Jalan SS 2/64"),
    ("Lot 5, Jalan Bukit Bintang, Kuala Lumpur", "Lot 5, Jalan Bukit Bintang"),
    ("rumah saya no 8 jalan usj 9/5 subang jaya", "no 8 jalan usj 9/5"),
    ("Unit 3-2, Jalan PJU 1A/3, Ara Damansara", "3-2, Jalan PJU 1A/3"),
    # The Philippines: a subdivision's block, lot and phase, the street, the barangay.
    (
        "Deliver to Blk 12 Lot 8, Mabini St., Brgy. San Isidro",
        "Blk 12 Lot 8, Mabini St., Brgy. San Isidro",
    ),
    ("Phase 2 Block 5 Lot 16, Camella Homes", "Phase 2 Block 5 Lot 16"),
    ("Lot 12 Blk 4, Brgy. Pasong Tamo", "Lot 12 Blk 4, Brgy. Pasong Tamo"),
    ("Address ko: B12 L8 Sampaguita St. Brgy. 176", "B12 L8 Sampaguita St. Brgy. 176"),
    # Czech and Slovak: the building's and the door's numbers, or a number after `ul.`, `ulici`.
    ("Bydlím v ulici Korunní 1206/54, Praha 2", "Korunní 1206/54"),
    ("kancelář je Na Příkopě 859/22, 110 00 Praha", "Na Příkopě 859/22, 110 00 Praha"),
    ("pošlete to na ul. Štefánikova 12, Bratislava", "ul. Štefánikova 12"),
    ("adresa firmy: Vinohradská 2396/184a, Praha 3", "Vinohradská 2396/184a"),
    ("Firma sídlí na adrese Husova 741/5", "Husova 741/5"),
    # Taiwan and Hong Kong: section, lane, alley, number, floor, room; full-width digits too.
    ("我住在台北市復興南路一段２１５號５樓", "復興南路一段２１５號５樓"),
    ("寄到台中市西屯區台灣大道三段99巷12弄5號3樓之1", "台灣大道三段99巷12弄5號3樓之1"),
    ("地點在九龍彌敦道 300 號 5 樓 A 室", "彌敦道 300 號 5 樓 A 室"),
    ("高雄市前鎮區中山二路5號12樓之3", "中山二路5號12樓之3"),
    ("香港中環德輔道中 100 號", "德輔道中 100 號"),
]


test_a_value_in_an_everyday_form_is_hidden = hides_each(FOUND)


# A connection string's field after a password that runs to the line's end is the next field,
# not the password's: what stands in its place is no value.
def test_a_placeholder_before_a_connection_strings_next_field_is_left() -> None:
    text = "Server=db;Database=x;User ID=sa;Password=<your-password>;Encrypt=True"
    assert found(text) == [], REDACTOR.redact([text]).texts[0]
    # and a real one is hidden up to its field's end, the next field left readable
    text = "User ID=sa;Password=Rpt#2023!;TrustServerCertificate=True"
    assert found(text) == ["Rpt#2023!"], REDACTOR.redact([text]).texts[0]


LEFT = [
    "Echo 1206/54 units were sold",
    # Class and model names in code, CamelCase words with sizes, versions and acronyms.
    "class Wav2Vec2SamePadLayer(nn.Module):",
    'F2PyDict_SetItemString(d, "x", o)',
    "model_name_or_path=HuggingFaceTB/SmolLM3-3B",
    'LlamaForCausalLM.from_pretrained("TinyLlama/TinyLlama-1.1B-Chat-v1.0")',
    "load facebook/m2m100_418M and IQuestLab/IQuest-Coder-V1-40B-Instruct",
    "base = MiniMaxAI/MiniMax-Text-01-hf",
    "from torch.ao.nn.intrinsic import ConvAddReLU2d as torch.ao.nn.intrinsic.ConvAddReLU2d",
    "ctx.use_certificate_file(path, OpenSSL.crypto.FILETYPE_ASN1)",
    # A tokenizer's special tokens; an attribute of an object named for a secret.
    'tokenizer = BertTokenizer(vocab, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]")',
    "        token.markup = marker",
    'token.tag = "strong" if is_strong else "em"',
    'styles = {Token.Keyword: "bold", Token.Comment: "italic", Token.String: "#AB0909"}',
    # The ids APIs give their objects: in every response, tool call and log line.
    '{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather"}',
    '{"id": "chatcmpl-9Xk2Lm4Np6Qr8St0Uv2Wx4Yz6Ab", "object": "chat.completion"}',
    "tool_call_id: call_Xk9Lm2Np4Qr6St8Uv0Wx2Yz1",
    "Stripe event evt_1N4Xk2Lm9Qp7Rt3Vb8Wc and payment intent pi_3M9Yz2Ab4Cd6Ef8Gh0Ij",
    "Request ID: req_9Xk2Lm4Np6Qr8St0Uv",
    # A login on a host, not a mailbox.
    "ssh deploy@bastion.example.com 'sudo systemctl restart nginx'",
    "ssh -i ~/.ssh/id_ed25519 -p 2222 ops@web1.example.com uptime",
    "rsync -av ./dist/ deploy@web1.example.com:/var/www",
    # Spoken "at" and "dot" that end in no domain.
    "look at this dot plot and that one",
    "Look at it dot by dot and you will see the pattern.",
    # What stands in a secret's place, cut where a value's characters end, or elided.
    "jdbc:postgresql://pg.internal:5432/app?user=app_rw&password=${DB_PASSWORD}",
    "kubectl create secret generic db --from-literal=password=$(cat pw.txt)",
    "OPENAI_API_KEY=sk-...your key here...",
    "STRIPE_SECRET_KEY=sk_test_placeholder",
    # The key of a Secret that holds a password, and an option that asks for one.
    "postgresql:\n  auth:\n    existingSecret: pg-creds\n    secretKeys:\n      adminPasswordKey: postgres-password",
    "wget --user=ops --ask-password https://files.internal/dump.sql",
    # Four numbers named as a release.
    "Version 2.4.1.0 of the library",
    "Released as version 1.2.3.4 on PyPI",
    # Windows paths and options of `net use` that give no password.
    "net use \\\\srv02\\hr /delete",
    "net use Z: \\\\nas01\\backup /persistent:yes",
    "net use \\\\fileserver\\finance * /user:CORP\\jdoe",
    # Cookies that log nobody in; the header named in a sentence.
    "Cookie: lang=en-US; tz=Europe%2FBerlin",
    "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/",
    # A Groovy call that reads its password from elsewhere.
    "signingConfigs {\n    release {\n        storePassword System.getenv('STORE_PASSWORD')\n    }\n}",
    # A street's words and a number that make no address: a walk's length, a band, an order's
    # number, a count of streets, a time at home, a district alone, an album.
    "Jalan kaki 5 km setiap hari itu sehat",
    "Gang of Four No. 1 hit in 1979",
    "Sipariş No: 12345 kargoya verildi",
    "Atatürk Cad. çok kalabalık bugün, 45 dakika sürdü",
    "تم إغلاق 15 شارعاً في المدينة",
    "मेरे घर 2 बजे आना",
    "सेक्टर 15 में मेट्रो है",
    "House No. 5 is the best album",
    "Page No. 12, Line No. 4 of the contract",
    # A street's words beside numbers that make no address: a wait, an issue's number, a dead
    # end, shops and metres on a street, a town's rockets (Sderot), a car's plate, kilometres, a
    # blockchain's years, a time at home, a price, a date, a room and a teacher's title, a group
    # of people, a song, a township's name, code's block, a project's phase, a CPU's cache, a
    # chapter, a season, a score, a model's number, a while, a player's number, a TV channel, a
    # highway, a metro line.
    "Calle 45 minutos de espera",
    "see issue # 13-27 in the tracker",
    "Carrera 70 metros y # 2 del ranking",
    "רחוב ללא מוצא",
    "ברחוב הזה 3 חנויות",
    "רחוב ארוך 300 מטר",
    "בשדרות נפלו 3 רקטות",
    "ماشین در خیابان با پلاک ۱۲ ایران ۳۴۵ پارک شد",
    "خیابان ولیعصر ۱۸ کیلومتر است",
    "بلاک چین 3 سال پرانی ہے",
    "বাড়ি ১২ টায় ফিরব",
    "ราคา 55/12 บาท",
    "วันที่ 12/3 ถนนปิด",
    "ห้อง 12/3 อ.สมชาย",
    "หมู่ 3 คน",
    "Lagu No. 5 jalan terus",
    "Track 3, Jalan Jalan Cari Makan",
    "Block 5 of the code",
    "Phase 2 of the project",
    "Block 2 L1 cache misses",
    "Kapitola 1/2",
    "Sezóna 2024/25 začala",
    "Výsledek 3/1",
    "Model 1206/54",
    "我花了一段時間學習",
    "我知道5號選手",
    "頻道5號",
    "走國道3號南下",
    "3號線",
]


test_a_look_alike_in_an_everyday_form_is_left = leaves_each(LEFT)


def test_random_runs_seldom_read_as_a_name() -> None:
    """A bare random run is hidden unless it reads as a class's or a model's name: seeded runs
    of 20 to 64 base64 characters that look random, a few in 10,000 read so (a rule that let
    syllables without vowels or runs of consonants count would let many more)."""
    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits + "+/"
    runs = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 65))) for _ in range(20000)
    ]
    random_looking = [run for run in runs if looks_random(run, hex_allowed=False)]
    assert len(random_looking) > 19000
    assert sum(map(reads_as_a_name, random_looking)) <= 12  # 6 in 10,000
    # ... and nearly all are hidden: runs of three letters of one case (`ROJ`, `xqv`) no longer
    # make a run "of words" (1 in 20 of these did).
    assert sum(map(unnamed_secret, random_looking)) >= 0.99 * len(random_looking)
    text = "pasted: 3WbROJAAxqv7fqJoHSTNzbiAUN0zsjI2 (from the old box)"
    assert hidden(text, "3WbROJAAxqv7fqJoHSTNzbiAUN0zsjI2"), REDACTOR.redact([text]).texts[0]
