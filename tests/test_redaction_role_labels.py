"""A person's name after a form's role label in other languages and scripts: the owner, the
tenant, the guest, the passenger, the member, the patient, the booker ("Proprietario: Paolo
Ricci", "Locatário: Rafael Moura", "乘机人: 王小明", "임차인: 이영희", "المستأجر: محمد حسن"), the
given-name and surname labels of a form written in capitals, and a greeting with a title
("Beste mevrouw Jansen-Bakker,"); the same labels before a firm, a number or a word stay."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import hides_each, leaves_each

pytestmark = pytest.mark.unit


test_a_name_after_a_role_label_is_hidden = hides_each(
    [
        # Italian
        ("Contratto di locazione\nProprietario: Paolo Ricci\nImmobile: via Roma 12, Bologna",
         "Paolo Ricci"),
        ("Prenotazione confermata.\nOspite: Giulia Marchetti\nCamera: doppia", "Giulia Marchetti"),
        ("Tessera associativa 2024 - Membro: Luca Ferraro", "Luca Ferraro"),
        ("Modulo di iscrizione\nDati: Chiara Benedetti\nClasse: 3B", "Chiara Benedetti"),
        ("Cognome: ESPOSITO   Nome: GENNARO   Nato a: Napoli", "ESPOSITO"),
        ("Cognome: ESPOSITO   Nome: GENNARO   Nato a: Napoli", "GENNARO"),
        # Spanish
        ("Ficha del inmueble\nPropietario: Jorge Vega Salinas\nSuperficie: 85 m2",
         "Jorge Vega Salinas"),
        ("Contrato de alquiler. Arrendatario: Rafael Moura Pinto, con DNI en vigor.",
         "Rafael Moura Pinto"),
        ("Billete electrónico\nPasajeros: Mercedes Alba Ruiz\nVuelo: IB3170", "Mercedes Alba Ruiz"),
        ("Huésped: Andrea Castillo\nLlegada: 12/08", "Andrea Castillo"),
        ("Apellidos: GARCÍA LÓPEZ\nNombre: JORGE\nCurso: 2º ESO", "JORGE"),
        # Portuguese
        ("Recibo de aluguel\nLocatário: Rafael Moura\nValor: R$ 1.800,00", "Rafael Moura"),
        ("Check-in realizado. Hóspede: Beatriz Cardoso, quarto 304.", "Beatriz Cardoso"),
        ("Cartão de embarque\nPassageiro: Tiago Nunes Ferreira\nAssento: 14C",
         "Tiago Nunes Ferreira"),
        # French
        ("Quittance de loyer\nBailleur : Jean Dupont\nLocataire : Claire Martin", "Jean Dupont"),
        ("Carte d'embarquement - Passager : Hugo Lefèvre - Siège 22A", "Hugo Lefèvre"),
        ("Fiche d'inscription\nNom : DUBOIS\nPrénom : Camille", "DUBOIS"),
        ("Adhérent : Nathalie Roux\nCotisation : réglée", "Nathalie Roux"),
        # German
        ("Mietvertrag\nVermieter: Jonas Weber\nMieter: Lea Hoffmann", "Jonas Weber"),
        ("Mitgliedsausweis\nMitglied: Sabine Krüger\nGültig bis: 12/2025", "Sabine Krüger"),
        ("Bordkarte\nPassagier: Tobias Schmitt\nGate: B12", "Tobias Schmitt"),
        ("Anmeldung\nTeilnehmer: Markus Braun\nKurs: Erste Hilfe", "Markus Braun"),
        # Dutch
        ("Huurcontract\nVerhuurder: Pieter de Vries\nHuurder: Sanne Bakker", "Pieter de Vries"),
        ("Beste mevrouw Jansen-Bakker,\n\nHierbij uw factuur.", "Jansen-Bakker"),
        ("Contactpersoon: Ruud Visser, tel. via de receptie", "Ruud Visser"),
        # Polish
        ("Umowa najmu\nNajemca: Jan Kowalski\nWynajmujący: Anna Nowak", "Jan Kowalski"),
        ("Karta pokładowa - Pasażer: Katarzyna Wiśniewska", "Katarzyna Wiśniewska"),
        ("Szanowna Pani Kowalska,\nprzesyłamy umowę.", "Kowalska"),
        # Turkish
        ("Kira sözleşmesi\nKiracı: Ayşe Yılmaz\nEv sahibi: Mehmet Demir", "Ayşe Yılmaz"),
        ("Üyelik kartı\nÜye: Zeynep Arslan\nNo: 10482", "Zeynep Arslan"),
        ("Ad: Zeynep   Soyad: Arslan", "Zeynep"),
        ("Ad: Zeynep   Soyad: Arslan", "Arslan"),
        # Chinese
        ("订单确认\n乘机人: 王小明\n航班: CA1234", "王小明"),
        ("预订人：陈丽华\n入住日期：2024-05-01", "陈丽华"),
        ("寄件人：刘洋\n收件人：王芳", "刘洋"),
        ("房屋租赁合同\n出租方(甲方): 张建国\n承租方(乙方): 李明", "李明"),
        # Japanese
        ("宿泊者名: 山田太郎\nチェックイン: 15:00", "山田太郎"),
        ("予約者名：田中花子　様", "田中花子"),
        ("児童名: 佐藤健\n学年: 3年", "佐藤健"),
        # Korean
        ("예약 확인\n예약자: 김민수\n인원: 2명", "김민수"),
        ("임대차 계약서\n임대인: 박철수\n임차인: 이영희", "이영희"),
        ("참석자: 최지우\n장소: 회의실 A", "최지우"),
        # Arabic
        ("اسم الضيف: أحمد علي\nرقم الغرفة: 210", "أحمد علي"),
        ("عقد إيجار\nالمؤجر: خالد سعيد\nالمستأجر: محمد حسن", "محمد حسن"),
        # Thai
        ("สัญญาเช่า\nชื่อผู้เช่า: สมชาย ใจดี\nห้อง: 502", "สมชาย ใจดี"),
        ("ผู้โดยสาร: วิภา ศรีสุข", "วิภา ศรีสุข"),
        # Hindi
        ("किरायानामा\nकिरायेदार: राहुल शर्मा\nमकान मालिक: सुनील वर्मा", "राहुल शर्मा"),
        ("यात्री: अनीता देसाई", "अनीता देसाई"),
        # Hebrew
        ("חוזה שכירות\nשוכר: יעל כהן", "יעל כהן"),
    ]
)  # fmt: skip


test_a_role_label_before_no_name_is_left = leaves_each(
    [
        "Propietario: Inmobiliaria Sol S.L.",
        "Proprietario: Immobiliare Rossi",
        "Vermieter: Hausverwaltung Müller",
        "Eigenaar: Woonstichting De Key",
        "Inhaber: Muster GmbH",
        "Pasajeros: 2 adultos",
        "Huésped: 2 adultos, 1 niño",
        "Membro: sì",
        "Mitglied: seit 2019",
        "Üye: evet",
        "Ospite: nessuno",
        "Dati: non disponibili",
        "Nome: file.txt",
        "Ad: 300x250 banner",
        "Patient: stable, no fever",
        "proprietario: string",
        "passenger: Optional[str]",
        "联系人: 客服部",
        "乘客：2人",
        "المالك: شركة الأمل للعقارات",
    ],
    of=("PERSON_NAME",),
)  # fmt: skip
