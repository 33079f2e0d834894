"""People's names as support chats, e-mail threads, pasted forms and tool output write them: a
signature's first line after its delimiter, a form's or a ticket's label that names a person,
a title between the label and the name, a caller's self-introduction, and a table whose header
names a person's column; and the same places holding a team, a firm or a product instead."""

from __future__ import annotations

import pytest

from tests.helpers.redaction import finds_one_name_in_each, grouped, leaves_each, names

pytestmark = pytest.mark.unit


SIGNATURES = [
    ("Cheers\nTom\n--\nTom Harlow | Harlow Bakery | 01632 960123", "Tom Harlow"),
    (
        "Thanks for the update.\n\n-- \nAdaeze Nwosu\nSenior Claims Officer | Lagos Mutual",
        "Adaeze Nwosu",
    ),
    ("See the attached schedule.\r\n--\r\nMarek Zieliński\r\nHead of Logistics", "Marek Zieliński"),
    ("Will do.\n-- \nSiobhán Ní Bhriain, Practice Manager\nDunmore Dental", "Siobhán Ní Bhriain"),
    ("ok\n--\nJan van der Berg - Field Engineer", "Jan van der Berg"),
    ("Kind regards,\n\nOluwaseun Adebayo\nAccounts Payable", "Oluwaseun Adebayo"),
]


LABELS = [
    ("Reported by: Sinead O'Connor\nSeverity: high", "Sinead O'Connor"),
    ("Submitted by: Carlos Mendes", "Carlos Mendes"),
    ("Requested by: Harriet Lowe\nDue: Friday", "Harriet Lowe"),
    ("Prepared by: Dimitri Papadakis", "Dimitri Papadakis"),
    ("Assigned to: Wei Zhang", "Wei Zhang"),
    ("Approved by: Fiona Mackenzie", "Fiona Mackenzie"),
    ("Contact person: Yusuf Adeyemi", "Yusuf Adeyemi"),
    ("Caller: Brenda Walsh\nReason: billing", "Brenda Walsh"),
    ("Driver: Kwame Mensah", "Kwame Mensah"),
    ("Next of kin: Grace Otieno", "Grace Otieno"),
    ("Emergency contact: Tomasz Nowak", "Tomasz Nowak"),
    ("Witness: Hannah Klein", "Hannah Klein"),
    ("Referred by: Noor Haddad", "Noor Haddad"),
    ("Authorised by: Olga Ivanova", "Olga Ivanova"),
    ("Assignee: Priyanka Desai", "Priyanka Desai"),
    ("Trabajador: José Luis Moreno\nCategoría: oficial", "José Luis Moreno"),
    ("Funcionário: Ana Beatriz Costa", "Ana Beatriz Costa"),
    ("Employé : Luc Marchand", "Luc Marchand"),
]


TITLES = [
    ("Insured name: Smt. Lakshmi Iyer", "Lakshmi Iyer"),
    ("Name: Mr. Rakesh Venkataraman", "Rakesh Venkataraman"),
    ("Customer: Chief Emeka Okonkwo", "Emeka Okonkwo"),
    ("Name: Alhaji Musa Bello", "Musa Bello"),
    ("Policyholder: Shri Ramesh Gupta", "Ramesh Gupta"),
    ("Caller: Dr Farah Siddiqui", "Farah Siddiqui"),
    ("Witness: Mrs Okafor\n", "Okafor"),
    # A possessive after a title's name: the person's, the name before it.
    ("Please forward the results to Mr Hussain's secretary.", "Hussain"),
    ("Results were sent to Dr. Mahmood's office on Friday.", "Mahmood"),
    ("Mrs. O'Neill's dog barked all night", "O'Neill"),
    # An initial before the family name, after a title.
    ("Referred by Dr A. Mahmood, cardiology.", "A. Mahmood"),
    ("Meeting notes: Prof. A. Lindqvist presented the budget.", "A. Lindqvist"),
    # A title in lower case after a greeting (Czech's vocative).
    ("Dobrý den pane Dvořáku,\nposílám podklady k přiznání.", "Dvořáku"),
]


INTRODUCTIONS = [
    ("Name's Jake Thornton, I'm calling about my order", "Jake Thornton"),
    ("Hi it's Lauren from accounts", "Lauren"),
    ("hey, it's Marco. Running late", "Marco"),
    ("Hi this is Gerry Doyle calling about the invoice", "Gerry Doyle"),
    ("Hi, Ngozi here. My parcel hasn't arrived", "Ngozi"),
    ("Ngozi here. Any news?", "Ngozi"),
    ("Tom Harlow here, re the delivery", "Tom Harlow"),
]


TABLES = [
    (
        "Nome | CPF | Telefone\nAna Paula Ribeiro | 241.678.845-00 | (11) 98765-4321\n",
        "Ana Paula Ribeiro",
    ),
    ("Driver | Licence no | Plate\nKwame Mensah | MENSA801234 | AB12 CDE\n", "Kwame Mensah"),
    (
        "Driver,Licence no,Plate,Phone\nKwame Mensah,MENSA801234KM9,AB12 CDE,07700 900123\n",
        "Kwame Mensah",
    ),
    ("Patient,DOB,Ward\nAisha Bello,1990-01-02,B4\n", "Aisha Bello"),
    ("Customer;Order;Total\nMaria Gonzalez;1001;45.00\n", "Maria Gonzalez"),
    (
        " id | full_name | ssn \n----+-----------+-----\n"
        "  1 | Lena Fischer | 123-45-6789\n(1 row)\n",
        "Lena Fischer",
    ),
    (
        "+----+--------------+\n| id | full_name    |\n+----+--------------+\n"
        "|  1 | Lena Fischer |\n+----+--------------+\n",
        "Lena Fischer",
    ),
    ("Staff ID | Employee | Shift\nA-114 | Tunde Bakare | night\n", "Tunde Bakare"),
]


test_a_label_a_title_or_a_self_introduction_is_followed_by_the_one_name = finds_one_name_in_each(
    {"label": LABELS, "title": TITLES, "introduction": INTRODUCTIONS}
)


@pytest.mark.parametrize(("text", "name"), grouped({"signature": SIGNATURES, "table": TABLES}))
def test_a_signatures_first_line_or_a_tables_person_column_holds_the_name(
    text: str, name: str
) -> None:
    assert name in names(text)


NO_NAMES = [
    "ok\n--\nHarlow Bakery | 01632 960123",
    "Reported by: automated monitor",
    "Assigned to: Platform Team",
    "Approved by: Finance Operations",
    "Hi it's me",
    "Hi it's Monday again!",
    "Hi this is John's laptop, not mine",
    "Thanks to Maria's Kitchen for the food.",
    "Dr. A. The end.",
    "Hi this is Google Assistant",
    "Driver: Realtek Audio",
    "Click here.",
    "Nobody here.",
    "Details here: see below",
    "-- \nCREATE TABLE Users (id int);",
    "SELECT 1;\n--\nDROP TABLE Users;",
    "x = a | b\ny = c | d\n",
    "name | version | license\nApache Arrow | 12.0 | Apache\n",
    "Title | Year\nBlue Velvet | 1986\n",
]


test_a_team_a_firm_a_product_or_code_in_those_places_is_no_name = leaves_each(
    NO_NAMES, of=("PERSON_NAME",)
)


def test_a_signature_made_of_a_firm_and_the_names_before_it() -> None:
    text = "Cheers\nTom\n--\nTom Harlow | Harlow Bakery | 01632 960123"
    # The firm's word stays; its owner's family name in it goes with the rest of his name.
    assert names(text) == ["Tom", "Tom Harlow", "Harlow"]
