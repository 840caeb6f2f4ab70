"""The instruction checks fail the instructions the issues quote verbatim, and pass a person's."""

from __future__ import annotations

import pytest

from toolgen.synth.checks import instruction_problems, text_problems


def checks(instruction: str, calls: list[dict] | None = None, tools: tuple[str, ...] = ()) -> set[str]:
    return {check for check, _ in instruction_problems(instruction, calls or [], tools)}


@pytest.mark.parametrize(
    ("instruction", "check"),
    [
        ('Tell me the name of the class whose class id is "X" whose class id is "X".', "repeated"),
        ('Look up the onestop flight id of the onestop flight whose origin is "YUO".', "repeated"),
        (
            "I need the total of the orders ORD-1 and ORD-2: i need the total of the orders ORD-1 and ORD-2.",
            "repeated",
        ),
        ('Tell me the flight whose date is "YYYY-MM-DD".', "placeholder"),
        ('Set the name to "string".', "placeholder"),
        ('Set the code to "<code>".', "placeholder"),
        ('Find the ticket whose date is "yyyy-MM-dd".', "placeholder"),
        ('Create a call with recipient "name@company.com".', "placeholder"),
        ('Invite the user "user@example.com".', "placeholder"),
        ('Tell me the time of the audits whose emails are "example@clearblade.com".', "placeholder"),
        (
            'Tell me the owner of the systems whose names are "System-Name" and "Billing System".',
            "placeholder",
        ),
        ('Book flights ["anyone American", "animal heavy"] for me.', "filler"),
        ('Change the unit to "item energy chair".', "filler"),
        (
            'Set the message to "Arm out which enter including argue moment matter only water available."',
            "filler",
        ),
        ('Book a round trip with flight type "round_trip".', "internal name"),
        ("Change the general_ledger_taxcode of the product.", "internal name"),
        ("Update the unitPrice of the product.", "internal name"),
        ("Please run get_user_details for me.", "internal name"),
        (
            'Change the info to {"email": "a@b.org"} and the backup info to {"email": "c@d.org"}.',
            "structured",
        ),
        ('Can you change the body of the payment to [{"date": "2024-08-14", "price": 12.5}]?', "structured"),
        ('Change the tag keys of the ones with scope "AWS" to ["conglomeration"].', "structured"),
        ("Set the topology to {}.", "structured"),
        ('Delete every attribute of the rule of the attribute whose name is "Adapter".', "circular"),
        ("Create a new calendar list for the color of the calendar list CL-1023.", "circular"),
        (
            'Look up the name of the group of the conversation whose chat name is "Chat" of the group whose name is "G".',
            "circular",
        ),
        ("Delete the certificate c8a93a2b-a271-442f-9fc3-7e45adb3fa01.", "opaque id"),
        ("Change the queue of the account AC88153272834349313108391393473830.", "opaque id"),
        ("What is the name of each of the inbound plans M76I8LWL and 4PRHDM5P?", "opaque id"),
        ("Look up the name of each of the inbound plans KPPFHB5A and 3SVTSFSO.", "opaque id"),
        ("Can you authorize the order ZW97CBCC?", "opaque id"),
        ("What is the status of each of the inbound plans EWWZ2RUD, AJLFPF22 and BXRYXVKF?", "opaque id"),
        ('Create a new chord progression with key "cdbcb5fbc4bd" and chords 14.', "opaque id"),
        ('Change the body of the attachment to "H8dYp8Q3w7QEJK57".', "opaque id"),
    ],
)
def test_the_quoted_faults_are_caught(instruction: str, check: str) -> None:
    assert check in checks(instruction, tools=("get_user_details",))


def test_a_value_the_calls_send_must_be_said() -> None:
    calls = [{"name": "update_contact", "arguments": {"customer_id": "C-0001", "address": "12 Elm Road"}}]
    assert checks("Change my address, please.", calls) == {"missing fact"}
    assert checks('Change my address to "12 Elm Road", please.', calls) == set()


def test_values_from_earlier_calls_need_not_be_said() -> None:
    calls = [
        {"name": "find_customers", "arguments": {"email": "ada@example.com"}},
        {"name": "freeze_card", "arguments": {"card_id": "$calls.0.card_id", "reason": "lost"}},
    ]
    assert checks('I lost my card; my email is "ada@example.com". Please freeze it ("lost").', calls) == set()


@pytest.mark.parametrize(
    "instruction",
    [
        "I want to exchange the keyboard I ordered for the same one with clicky switches, and change "
        'the address of my pending order to "12 Elm Road".',
        'Cancel the order for the customer whose email is "ada@example.com" and the order for the '
        'customer whose email is "bob@example.com".',
        "Please calculate 2 + 2 for me.",
        'Set the title to "Quarterly Budget Review".',
        "Book a round trip from JFK to LAX on 2024-05-01.",
        'Add the note "Customer called about a late delivery; refund approved by the supervisor."',
        'Set the reason to "I lost my card on the train this morning."',
        'Rename the team to "Blue Ridge".',
        "Set the auto balance to true, the auto restart to true and the concurrency to 4.",
        'Set the tags to "red", "blue" and "green [draft]".',
        "Cancel my order ORD-1001 and call me on 5551234567.",
        'Apply the code "SUMMER2024" to my order; the serial number is "COVID19XX".',
        'Delete the order of the customer whose name is "Bo" and the order of the store of the mall.',
        'Revert to commit b798596 and set the color to "deadbeefcafe" for 1234567890 effaced12.',
        'Order the iPhone15ProMax and a MacBookPro2024 with the code "GPT4oMini2024".',
    ],
)
def test_what_a_person_says_passes(instruction: str) -> None:
    assert checks(instruction, tools=("calculate", "book_reservation")) == set()


def test_text_problems_checks_a_clause_without_results():
    calls = [{"name": "get_order", "arguments": {"order_number": "A 17"}}]
    assert text_problems('Cancel the order whose number is "A-17".', calls, ["get_order"]) is None
    assert text_problems('Call get_order on the order whose number is "A-17".', calls, ["get_order"]) == (
        "internal name"
    )
    # a value only a result could supply is not asked for here: no "missing fact"
    assert text_problems("Cancel my last order.", calls, ["get_order"]) is None
    assert instruction_problems("Cancel my last order.", calls, ["get_order"], results=[])
