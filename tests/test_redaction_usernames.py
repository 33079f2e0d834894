"""A person's login name (USERNAME): after a word naming it in many languages, in credentials'
syntax (a URL's userinfo, an ssh config, a .pgpass line, a command's -u/-a user:password), and
game and app IDs after the app's name (MESSENGER_ID); generic accounts, placeholders and code
stay."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import REDACTOR, found, grouped, hidden, hides_each, kinds

pytestmark = pytest.mark.unit


test_a_login_in_credentials_syntax_is_redacted = hides_each(
    [
        (
            "git clone https://kwroblewska:glpat-xK3mP9qLm2Rt7vBn4wZs@gitlab.com/team/app.git",
            "kwroblewska",
        ),
        (
            "Host work\n  HostName 10.1.2.3\n  User dieter\n  IdentityFile ~/.ssh/id_ed25519\n",
            "dieter",
        ),
        ("localhost:5432:*:olumide:olumide2020", "olumide"),
        ("http -a jdelacruz:Mahal2kita! POST api.example.com/orders", "jdelacruz"),
        ("curl -u ana.silva:secret https://api.example.com/me", "ana.silva"),
        ("net use Z: \\\\fs01\\share /user:CORP\\jsmith P4ss!word", "jsmith"),
        ("ssh jsmith@10.0.0.5 'uptime'", "jsmith"),
        ("ssh -i key.pem -l hkimura bastion.example.com", "hkimura"),
        ("gh auth login then --username rkhan_dev", "rkhan_dev"),
        # A .netrc's login, its password on the next line; a client's user option; a call's
        # user beside its password; a home directory before a prompt's `>`.
        ("machine nas.home.lan\n  login pablo\n  password Gatito#2019!", "pablo"),
        ("docker login -u rkhanna -p 'Dh4ka!Monsoon22' registry.gitlab.com", "rkhanna"),
        ("psql -U ivanov_a -d crm -c 'select count(*) from orders'", "ivanov_a"),
        ('psycopg2.connect(host="db", user="pj", password="Fietsen!88", dbname="x")', "pj"),
        ("PS C:\\Users\\rkhanna> dir", "rkhanna"),
    ]
)


# (text, the login or the app's or game's ID in it) after the word or the app naming it, by kind.
AFTER_THEIR_NAME = {
    "USERNAME": [
        # A name in a game, in English and in Hinglish.
        ("the name in game was NightOwl_Kai. we bought gems", "NightOwl_Kai"),
        ("mera in-game naam ThunderRaja_07 hai aur level 60", "ThunderRaja_07"),
        # A chat's mention of a person by a handle of two names, inside a line.
        ("*OnCallBot*: Salut @julien.moreau, c'est ta semaine", "@julien.moreau"),
        ("primary on-call (handover from @ewa.nowak)", "@ewa.nowak"),
        # A login's label, then the login and the words that go on to its password.
        ("username: jsmith88 and the password is below", "jsmith88"),
        # An inventory's login, an IAM user's name in its ARN.
        ("    ansible_host: 10.0.3.7\n    ansible_user: vkarimov\n", "vkarimov"),
        ('{"AWS": "arn:aws:iam::123456789012:user/ops/l.ferreira"}', "l.ferreira"),
        ("my username: CoolDino_Max2015, can you unlock it?", "CoolDino_Max2015"),
        ("Cannot get in, my username was xXdarkwolf2009Xx", "xXdarkwolf2009Xx"),
        ("el usuario es marianaq_77 y no puedo entrar", "marianaq_77"),
        ("Usuario: lmartinez42", "lmartinez42"),
        ("login do ePUAP -> m.zielinska84", "m.zielinska84"),
        ("Benutzername: k.schulze\nPasswort vergessen", "k.schulze"),
        ("identifiant : jdupont75", "jdupont75"),
        ("nome utente: mrossi", "mrossi"),
        ("gebruikersnaam: pvandijk", "pvandijk"),
        ("nazwa użytkownika: akowalska", "akowalska"),
        ("kullanıcı adı: mehmet_k", "mehmet_k"),
        ("我的用户名：zhangwei88，密码忘了", "zhangwei88"),
        ("ユーザー名はtaro_y93です", "taro_y93"),
        ("넥슨 계정 아이디: moonlight_jh", "moonlight_jh"),
        ("اسم المستخدم: ahmad_k", "ahmad_k"),
        ("my username is mrossi", "mrossi"),
        ('{"username": "kwame_builds", "role": "editor"}', "kwame_builds"),
        ("Username:\n  DarkFrost_2006", "DarkFrost_2006"),
        ("username mwilliams pass Winter#2023", "mwilliams"),
        ("Tài khoản: minh_nguyen_88\nEm không đăng nhập được", "minh_nguyen_88"),
        ("Nachricht von radler_kiel: Ist das Sofa noch da?", "radler_kiel"),
        ("Message from lucy.b_92: can I pick it up tonight?", "lucy.b_92"),
        ("pay me at ananya.k22@oksbi, thanks", "ananya.k22@oksbi"),
        ("paise bhej de, mera id hai vikram.s@ybl", "vikram.s@ybl"),
        # Who speaks on a chat export's lines, by handle.
        ("@dana.reyes.art: is the room still free?\nme: yes, from the 3rd", "dana.reyes.art"),
        ("[DM]\n@noemi_b_91 : salut ! je peux venir samedi ?", "noemi_b_91"),
        (
            "tomasz_pl88: my account got locked today\nAgent: I can help with that\n"
            "tomasz_pl88: i changed nothing at all",
            "tomasz_pl88",
        ),
        ("xX_Falcon77: gg that was close\nxX_Falcon77: rematch at nine tonight?", "xX_Falcon77"),
        # Who logged in, as sshd, sudo and PAM log it; a home directory's path.
        (
            "Mar 11 03:22:41 web-02 sshd[2211]: Accepted password for olga.petrova from "
            "95.165.44.201 port 51822 ssh2",
            "olga.petrova",
        ),
        ("Failed password for invalid user kbauer from 10.1.2.3 port 22 ssh2", "kbauer"),
        ("Mar 11 03:23:05 web-02 sudo:  mdiallo : TTY=pts/0 ; PWD=/srv ; USER=root", "mdiallo"),
        ("pam_unix(sshd:session): session opened for user dkowalski(uid=1001) by", "dkowalski"),
        ('File "/Users/priya.k/dev/app.py", line 3, in <module>', "priya.k"),
        ("C:\\Users\\jmoreau\\AppData\\Local\\Temp", "jmoreau"),
        ("Enter passphrase for key '/home/tsato/.ssh/id_ed25519':", "tsato"),
    ],
    "MESSENGER_ID": [
        ("Riot ID: KaraKartal#TR1 add me", "KaraKartal#TR1"),
        ("넥슨ID: moonlight_jh", "moonlight_jh"),
        ("Steam: pyro_kid99", "pyro_kid99"),
        ("PSN: DarkSoulz_88", "DarkSoulz_88"),
        ("Xbox gamertag: ShadowFox221", "ShadowFox221"),
        ("BattleTag: Frostbite#1872", "Frostbite#1872"),
        # A Discord tag a few words after the app; Russian's slang for Telegram; a LINE ID in
        # Thai with a dot in it.
        ("ping me on Telegram or Discord works too: kaylamoms#4821", "kaylamoms#4821"),
        ("как вернёте напишите в телегу @serg_vlad1987", "@serg_vlad1987"),
        ("ส่งสลิปมาที่ไลน์ไอดี tanapol.w ได้เลย", "tanapol.w"),
        # A handle in the sentence after the app's name.
        ("podemos continuar pelo Telegram? o meu é @catarina_lx95. e manda-me", "@catarina_lx95"),
        ("Discord: vexa#1234 or vexa", "vexa#1234"),
        ("Roblox username: Builderman", "Builderman"),
        ("Threema: 7HXK2P9M", "7HXK2P9M"),
        ("IG: @glambyfunke_", "@glambyfunke_"),
        ("snap me @jessicaa.rose_", "@jessicaa.rose_"),
        ("LINE ID: ana.k88", "ana.k88"),
        ("Epic ID: NinjaBuilder42", "NinjaBuilder42"),
        # A code host's username after its name and a colon, in a record as JSON too; a
        # label's `me` is no ID word (`LINE: mei_chan`).
        ("Phone: +254 757 204 119\nGitHub: wanjiru-dev\nTeam: Nairobi", "wanjiru-dev"),
        ("usuario github: tomasvq", "tomasvq"),
        ('{"email": "x@y.io", "github": "meiling"}', "meiling"),
        ("LINE: mei_chan", "mei_chan"),
        # A game account's tag or number after the words for it.
        ("his player tag is #8RQV2LX0P and he plays every night", "#8RQV2LX0P"),
        ("Нік у грі — Вовк_2010, ID гравця 774120. Прив'язана пошта", "774120"),
        ("catch me on twitch @xqc_fan", "@xqc_fan"),
    ],
}


@pytest.mark.parametrize(("kind", "text", "value"), grouped(AFTER_THEIR_NAME, name_first=True))
def test_a_login_or_an_app_id_after_its_name_is_redacted_as_its_kind(
    kind: str, text: str, value: str
) -> None:
    assert hidden(text, value), found(text)
    assert kinds(text).get(value) == kind, kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "username = request.form['username']",
        "ssh ubuntu@10.0.0.5",
        "Host box\n  HostName box.internal\n  User root\n",
        "login: admin",
        "the username field is required",
        "The username is required.",
        "username was incorrect, try again",
        "postgres://postgres:${PGPASSWORD}@db/app",
        "git@github.com:org/repo.git",
        "ssh://git@github.com/org/repo.git",
        "username = os.getenv('DB_USER')",
        "username: str = Field(..., min_length=3)",
        "username: Optional[str] = None",
        "username = args.username",
        "username=None",
        'username: "${USER}"',
        "username: %USERNAME%",
        "username: <user>",
        "username: your_username",
        "login: async (req) => {",
        "login:\n  url: /signin\n  enabled: true",
        "docker run -u node:node image",
        "https://oauth2:glpat-xK3mP9qLm2Rt7vBn4wZs@gitlab.com/x.git",
        "User: how do I reverse a list in Python?",
        "ig = C.pop()",
        "snapshot @property",
        "PSN: Packet Sequence Number",
        "my steam is hot",
        "USER nobody",
        "@param value: the value to store\n@return: the stored value",
        "@dataclass: a decorator that writes the init for you",
        "worker_1: started the job at 12:00\nworker_1: finished the job at 12:05",
        "Rank0: loss is 1.25 now\nRank0: loss is 1.10 now",
        "eval_loss: 0.52 at step 3\neval_loss: 0.50 at step 4",
        "val_acc: 0.91 after epoch 3\nval_acc: 0.93 after epoch 4",
        "Message from the team: we are closed on Monday",
        "mensaje de error: el campo es obligatorio",
        "and the error message from JSONDecodeError is preserved.",
        'File "/home/ubuntu/app/main.py", line 3',
        "Failed password for invalid user admin from 1.2.3.4 port 22 ssh2",
        "waiting for user input from the console",
        "cp /Users/Shared/notes.txt .",
        "write to support@example.com or billing@ybl.example.org",
        # Where a command logs in, not as whom; a client's generic or placeholder user; a
        # config's user read from the environment; an issue's number near the app's name.
        "$ docker login ghcr.io -u $GH_USER --password-stdin < token.txt",
        "psql -U postgres -d app; mysql -u root -p; docker run -u 1000 img",
        'cfg = {"user": os.environ["U"], "password": "x"}',
        "the discord server has channel #1234 and issue #4821",
        "ไลน์ thanks. ok",
        # A word of the sentence after the app's name and a verb; a mention of everyone.
        "Telegram is great. Ask @everyone in the channel.",
        # A code host named before other words; a decorator, first on its line or quoted.
        "if provider == Provider.GITHUB:\n    return token",
        "# regression test for GitHub issue #6439",
        "we use gitlab: self-hosted",
        "the player id is stored in the session table; game id 2 of the season",
        "@dataclass\nclass Player:\n    player_id: PlayerId\n",
        '@app.route("/x")\ndef f(): ...\n    @mark.parametrize("x", [1])',
        "x = 1  # see @mark.parametrize usage, or ping @pytest.mark later",
        # A chat's speaker whose name is a login's label: a message after it, or it speaking
        # on another line too.
        "Пользователь: сколько будет 15% от 84 000?\nАссистент: 12 600.",
        "Usuario: ok pero otra cosa más\nSoporte: claro\nUsuario: listo",
        # A traceback's class twice, a log's programs, code's annotated fields, a glossary.
        "ValueError: invalid literal for int() with base 10\nDuring handling of the above\n"
        "ValueError: invalid literal for int() with base 10",
        "kernel: usb 1-1: new high-speed USB device number 2\n"
        "kernel: usb 1-1: New USB device found, idVendor=0781\nsystemd: Started Session 3 of x",
        "max_tokens: int = 100\ntop_p: float = 0.9\nmax_tokens: int = 200 at most here",
        "PostgreSQL: an open source database\nRedisJSON: a module for JSON documents\n"
        "MongoDB: a document store for apps",
        "[INFO] api_gateway: request took 35 ms\n[INFO] api_gateway: request took 40 ms\n"
        "[INFO] auth_service: token refreshed for the session",
        # A social network's own pages, a project's page on a code host.
        "share it: https://www.facebook.com/sharer/sharer.php?u=x or https://instagram.com/p/Cx12/",
        "see https://github.com/pytorch/pytorch/issues/123 and https://twitter.com/intent/tweet",
    ],
)
def test_generic_accounts_placeholders_and_code_stay(text: str) -> None:
    assert "USERNAME" not in kinds(text).values() and "MESSENGER_ID" not in kinds(text).values(), (
        found(text)
    )


# A chat's speakers by handle (two speakers, one of them speaking twice): each whose name is
# made as handles are, and one in lower case outside the dictionary beside one of those.
CHAT_SPEAKERS = [
    (
        "[Discord – Vendas FF]\nKaduzinho_FF: vendo conta free fire lvl 72 com bundle\n"
        "Kaduzinho_FF: passo tudo depois do pix, ok?\nModeração: venda de contas é proibida",
        "Kaduzinho_FF",
    ),
    (
        "#general\nElPulpoTactico: alguien sabe por qué no me deja entrar\n"
        "nachoxx_99: pon la ip bien, es la de siempre\nElPulpoTactico: ya, y me pide registrarme",
        "ElPulpoTactico",
    ),
    (
        "#bot-dev\nvexlight: bot keeps going offline lol here's my index.js\n"
        "moddy_mcmodface: BRO delete that message and reset the token\nvexlight: oh no what now",
        "moddy_mcmodface",
    ),
    (
        "#bot-dev\nvexlight: bot keeps going offline lol here's my index.js\n"
        "moddy_mcmodface: BRO delete that message and reset the token\nvexlight: oh no what now",
        "vexlight",
    ),
    (
        "[Discord – Polscy Wiedźmini]\nKuba_z_Radomia: ktoś mi ukradł konto na discordzie\n"
        "Zielona_Ola: zmieniłeś hasło już?\nKuba_z_Radomia: nie mogę się zalogować teraz",
        "Zielona_Ola",
    ),
    (
        "[Trade Hub] NightOwl_Kira: selling my acc, 40+ skins\n[Trade Hub] ModBot: this is not "
        "allowed here\n[Trade Hub] NightOwl_Kira: ok ok sorry",
        "NightOwl_Kira",
    ),
]
# The account in a social network's profile URL.
PROFILE_URLS = [
    ("LinkedIn: linkedin.com/in/keishamontgomery-pm", "keishamontgomery-pm"),
    (
        "find me at https://www.linkedin.com/in/maria-gonzalez-8b2a1b12/ pls",
        "maria-gonzalez-8b2a1b12",
    ),
    (
        "my github is https://github.com/jdoe-dev and my insta is instagram.com/kira.plays.",
        "jdoe-dev",
    ),
    (
        "my github is https://github.com/jdoe-dev and my insta is instagram.com/kira.plays.",
        "kira.plays",
    ),
    ("DM me on t.me/kira_noctis", "kira_noctis"),
    ("this one: https://x.com/jane_doe/status/1234567", "jane_doe"),
    ("her tiktok is tiktok.com/@lina.bakes", "lina.bakes"),
]
test_a_chats_handles_and_a_profile_urls_account_are_redacted = hides_each(
    {"chat_speaker": CHAT_SPEAKERS, "profile_url": PROFILE_URLS}
)


def test_a_login_found_once_is_hidden_where_it_stands_again() -> None:
    """sshd's line names the login; the same login in a path on the next line, and in the
    record's other text, is hidden too (no finder reads `/srv/<login>`)."""
    prompt = (
        "sshd[2211]: Accepted password for olga.petrova from 10.0.0.9 port 51822 ssh2\n"
        "sudo: cd /srv/olga.petrova/www ; COMMAND=/usr/bin/cat /etc/shadow"
    )
    response = "olga.petrova logged in at 03:22 and read /etc/shadow."
    shown = REDACTOR.redact([prompt, response]).texts
    assert "olga.petrova" not in "".join(shown), shown
    assert shown[0].count("<USERNAME_1>") == 2 and shown[1].startswith("<USERNAME_1> "), shown
