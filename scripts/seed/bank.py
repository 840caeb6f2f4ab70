#!/usr/bin/env python3
"""Generate the seed data of the bundled `bank` domain: domains/bank/seed/<table>.jsonl.

Deterministic: one random.Random with a fixed seed for the background population, and
per-key random.Random instances for the hand-written scenario fixtures that tasks.jsonl
refers to (so their ids never shift when the background changes). No wall clock, no uuid4:
running the script twice gives byte-identical files.

    python scripts/seed/bank.py            # writes domains/bank/seed/*.jsonl
    python scripts/seed/bank.py --check    # exits 1 if the files on disk differ
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

SEED = 20260302
OUT = Path(__file__).resolve().parents[2] / "domains" / "bank" / "seed"
EPOCH = dt.datetime(2026, 3, 2, 9, 0, 0)  # the domain clock start; background data is older

TABLES = ["customers", "accounts", "cards", "beneficiaries", "transfers", "card_transactions", "disputes"]
PREFIX = {
    "customers": "CUS-",
    "accounts": "ACC-",
    "cards": "CRD-",
    "beneficiaries": "BEN-",
    "transfers": "TRF-",
    "card_transactions": "TXN-",
    "disputes": "DSP-",
}
KEY = {
    "customers": "customer_id",
    "accounts": "account_id",
    "cards": "card_id",
    "beneficiaries": "beneficiary_id",
    "transfers": "transfer_id",
    "card_transactions": "txn_id",
    "disputes": "dispute_id",
}

# fmt: off
FIRST = """James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth William Barbara Richard Susan
Joseph Jessica Thomas Sarah Charles Karen Chris Nancy Matthew Lisa Anthony Betty Mark Sandra Paul Ashley
Steven Kimberly Andrew Emily Joshua Donna Kevin Michelle Brian Carol George Amanda Timothy Melissa Ryan
Deborah Jacob Stephanie Nicolas Rebecca Ethan Laura Raj Ananya Mohammed Leila Chen Mei Hiroshi Sakura
Oluwaseun Chiamaka Mateo Valentina Lars Ingrid Pierre Camille Giulia Marco Ivan Olga Kwame Abena""".split()
LAST = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Taylor Thomas Moore Jackson Martin Lee Perez White Harris Sanchez Clark Ramirez Lewis
Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall
Rivera Campbell Mitchell Carter Roberts Patel Shah Chowdhury Yamamoto Suzuki Wang Li Mensah Boateng
Nwosu Eze Silva Santos Johansson Nilsson Dubois Laurent Bianchi Romano Petrov Ivanova Kowalski""".split()
STREETS = """Maple Oak Pine Cedar Elm Walnut Chestnut Birch Willow Spruce Lake Hill River Park Sunset Meadow
Forest Highland Church Mill Spring Ridge Valley Orchard Harbor""".split()
STREET_KINDS = ["St", "Ave", "Rd", "Blvd", "Ln", "Dr", "Ct", "Way"]
CITIES = [
    ("Springfield", "IL", "627"), ("Madison", "WI", "537"), ("Denver", "CO", "802"), ("Raleigh", "NC", "276"),
    ("Tucson", "AZ", "857"), ("Boise", "ID", "837"), ("Richmond", "VA", "232"), ("Omaha", "NE", "681"),
    ("Albany", "NY", "122"), ("Sacramento", "CA", "958"), ("Salem", "OR", "973"), ("Tampa", "FL", "336"),
    ("Columbus", "OH", "432"), ("Austin", "TX", "787"), ("Nashville", "TN", "372"), ("Hartford", "CT", "061"),
]
MERCHANTS = [
    ("Whole Foods Market", "groceries", 20, 220), ("Trader Joe's", "groceries", 15, 160),
    ("Safeway", "groceries", 10, 180), ("Shell", "fuel", 25, 90), ("Chevron", "fuel", 25, 95),
    ("Blue Bottle Coffee", "dining", 4, 18), ("Chipotle", "dining", 9, 35), ("Olive Garden", "dining", 30, 140),
    ("Amazon", "shopping", 8, 400), ("Target", "shopping", 12, 260), ("Best Buy", "electronics", 30, 1200),
    ("Apple Store", "electronics", 29, 1500), ("Netflix", "subscriptions", 15.49, 15.49),
    ("Spotify", "subscriptions", 11.99, 11.99), ("Delta Air Lines", "travel", 120, 900),
    ("Marriott Hotels", "travel", 140, 780), ("Uber", "transport", 7, 60), ("Lyft", "transport", 7, 55),
    ("CVS Pharmacy", "health", 6, 90), ("Home Depot", "home", 15, 650), ("IKEA", "home", 25, 900),
    ("Planet Fitness", "health", 24.99, 24.99), ("Steam Games", "entertainment", 5, 70),
]
MEMOS = ["Rent share", "Savings top-up", "Utilities", "Dinner", "Birthday gift", "Loan repayment", "Groceries",
         "Car repair", "Holiday fund", "Tuition", "Monthly transfer", "Concert tickets", None, None]
DISPUTE_REASONS = ["unauthorized", "duplicate_charge", "incorrect_amount", "goods_not_received", "other"]
# fmt: on


def ts(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def money(x: float) -> float:
    return round(x + 0.0, 2)


class Ids:
    """Unique 8-hex-digit ids per table; fixtures take theirs from a per-key Random."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def fixture(self, table: str, key: str) -> str:
        value = PREFIX[table] + format(random.Random(f"bank-fixture:{table}:{key}").getrandbits(32), "08x")
        assert value not in self.used, value
        self.used.add(value)
        return value

    def new(self, table: str) -> str:
        while True:
            value = PREFIX[table] + format(self.rng.getrandbits(32), "08x")
            if value not in self.used:
                self.used.add(value)
                return value


# ---------------------------------------------------------------------------------------------
# Scenario fixtures: the customers tasks.jsonl talks about. Edit with care: tasks depend on them.
# ---------------------------------------------------------------------------------------------

# fmt: off
FIX_CUSTOMERS = [
    # key, name, email, phone, address, dob, tier, status, created
    ("okafor", "Maria Okafor", "maria.okafor@example.com", "+1-555-0101-3344", "51 Birch Ln, Raleigh, NC 27601", "1986-04-12", "standard", "active", "2017-05-03T10:12:00Z"),
    ("reyes", "Daniel Reyes", "daniel.reyes@example.com", "+1-555-0102-8812", "900 Sunset Blvd, Tucson, AZ 85701", "1979-11-30", "premier", "active", "2014-02-17T15:40:00Z"),
    ("natarajan", "Priya Natarajan", "priya.natarajan@example.com", "+1-555-0103-4419", "17 Orchard Way, Madison, WI 53703", "1991-07-08", "standard", "active", "2019-09-21T09:05:00Z"),
    ("herrera", "Tomás Herrera", "tomas.herrera@example.com", "+1-555-0104-7720", "3 Cedar Ct, Denver, CO 80203", "1988-01-25", "standard", "active", "2018-03-11T11:30:00Z"),
    ("fischer", "Lena Fischer", "lena.fischer@example.org", "+1-555-0105-1200", "402 Mill Rd, Denver, CO 80205", "1975-06-14", "standard", "active", "2016-08-02T14:00:00Z"),
    ("liu", "Grace Liu", "grace.liu@example.com", "+1-555-0106-5531", "88 Willow Dr, Sacramento, CA 95814", "1993-03-03", "standard", "active", "2020-01-14T08:45:00Z"),
    ("adeyemi", "Samuel Adeyemi", "samuel.adeyemi@example.com", "+1-555-0107-9087", "14 Elm St, Columbus, OH 43215", "1984-10-19", "standard", "active", "2015-06-28T16:20:00Z"),
    ("becker", "Hannah Becker", "hannah.becker@example.com", "+1-555-0108-3310", "2207 Oak Ridge Dr, Austin, TX 78704", "1990-12-01", "standard", "active", "2019-04-07T12:10:00Z"),
    ("haddad", "Ibrahim Haddad", "ibrahim.haddad@example.com", "+1-555-0109-6675", "61 Spring Ave, Richmond, VA 23220", "1982-05-22", "standard", "active", "2013-10-30T10:00:00Z"),
    ("brennan", "Olivia Brennan", "olivia.brennan@example.com", "+1-555-0143-2210", "7 Meadow Ln, Albany, NY 12203", "1995-09-09", "standard", "active", "2021-02-19T13:25:00Z"),
    ("watanabe", "Kenji Watanabe", "kenji.watanabe@example.com", "+1-555-0111-2048", "1200 Lake St, Salem, OR 97301", "1987-02-14", "premier", "active", "2016-11-11T09:50:00Z"),
    ("sato", "Rina Sato", "rina.sato@example.net", "+1-555-0112-7301", "33 Park Ave, Salem, OR 97302", "1989-08-27", "standard", "active", "2018-07-04T17:35:00Z"),
    ("zahra", "Fatima Zahra", "fatima.zahra@example.com", "+1-555-0113-6402", "19 Highland Rd, Tampa, FL 33602", "1992-04-30", "standard", "active", "2020-06-15T10:40:00Z"),
    ("moreau", "Lucas Moreau", "lucas.moreau@example.com", "+1-555-0114-8890", "250 River Rd, Nashville, TN 37201", "1994-01-18", "standard", "active", "2021-09-09T15:15:00Z"),
    ("lindqvist", "Emma Lindqvist", "emma.lindqvist@example.com", "+1-555-0115-2267", "9 Forest Way, Nashville, TN 37203", "1996-05-05", "standard", "active", "2022-03-01T11:00:00Z"),
    ("bello", "Aisha Bello", "aisha.bello@example.com", "+1-555-0116-4403", "45 Valley Dr, Omaha, NE 68102", "1985-12-12", "standard", "active", "2017-12-20T09:30:00Z"),
    ("kim", "Robert Kim", "robert.kim@example.com", "+1-555-0117-1188", "512 Chestnut St, Hartford, CT 06103", "1978-03-16", "premier", "active", "2012-04-22T14:05:00Z"),
    ("fitzgerald", "Nora Fitzgerald", "nora.fitzgerald@example.com", "+1-555-0118-3022", "70 Church St, Boise, ID 83702", "1983-07-21", "premier", "active", "2015-01-08T10:20:00Z"),
    ("lfitzgerald", "Liam Fitzgerald", "liam.fitzgerald@example.net", "+1-555-0119-5540", "12 Pine St, Boise, ID 83704", "1986-10-02", "standard", "active", "2016-05-16T12:45:00Z"),
    ("zhang", "Wei Zhang", "wei.zhang@example.com", "+1-555-0120-7765", "808 Harbor Blvd, Tampa, FL 33606", "1990-02-28", "standard", "active", "2018-10-10T16:00:00Z"),
    ("thompson", "Jessica Thompson", "jessica.thompson@example.com", "+1-555-0121-9944", "26 Walnut Ave, Springfield, IL 62701", "1981-06-06", "standard", "active", "2014-07-29T08:55:00Z"),
    ("mendez", "Carlos Mendez", "carlos.mendez@example.com", "+1-555-0122-4471", "134 Spruce Ln, Springfield, IL 62702", "1977-09-13", "standard", "active", "2013-03-05T13:15:00Z"),
    ("vance", "Eleanor Vance", "eleanor.vance@example.com", "+1-555-0123-6618", "5 Ridge Rd, Hartford, CT 06105", "1972-11-24", "standard", "active", "2012-09-14T10:10:00Z"),
    ("johnson", "Marcus Johnson", "marcus.johnson@example.com", "+1-555-0124-3390", "77 Maple Ave, Columbus, OH 43201", "1980-08-08", "standard", "locked", "2014-11-03T15:30:00Z"),
    ("tanaka", "Yuki Tanaka", "yuki.tanaka@example.com", "+1-555-0125-2201", "41 Sunset Way, Sacramento, CA 95816", "1997-04-04", "standard", "active", "2022-08-18T09:20:00Z"),
    ("rossi", "Sofia Rossi", "sofia.rossi@example.com", "+1-555-0126-8456", "300 Lake Dr, Madison, WI 53711", "1988-05-17", "standard", "active", "2017-02-26T11:50:00Z"),
    ("novak", "Peter Novak", "peter.novak@example.com", "+1-555-0127-1739", "62 Hill St, Albany, NY 12208", "1976-12-30", "premier", "active", "2012-12-12T12:00:00Z"),
    ("osei", "Amara Osei", "amara.osei@example.com", "+1-555-0128-4060", "19 Meadow Ct, Raleigh, NC 27605", "1991-10-11", "premier", "active", "2019-11-30T10:30:00Z"),
    ("costa", "Bruno Costa", "bruno.costa@example.com", "+1-555-0129-5512", "8 Elm Ave, Tampa, FL 33609", "1985-03-29", "standard", "active", "2016-04-01T09:00:00Z"),
    ("park", "Helen Park", "helen.park@example.org", "+1-555-0130-6623", "1500 Oak Blvd, Tampa, FL 33611", "1968-01-09", "standard", "active", "2011-10-21T14:40:00Z"),
    ("alvarez", "Diego Alvarez", "diego.alvarez@example.com", "+1-555-0131-7734", "27 Willow Ct, Austin, TX 78701", "1993-06-19", "standard", "active", "2019-01-23T10:15:00Z"),
    ("karimi", "Ahmed Karimi", "ahmed.karimi@example.com", "+1-555-0132-8845", "90 Cedar Ave, Richmond, VA 23219", "1987-09-01", "standard", "active", "2018-05-05T13:35:00Z"),
    ("dubois", "Chloe Dubois", "chloe.dubois@example.com", "+1-555-0133-9956", "3 Orchard Rd, Boise, ID 83706", "1990-11-15", "premier", "active", "2016-12-01T09:10:00Z"),
    ("ortiz", "Isabel Ortiz", "isabel.ortiz@example.com", "+1-555-0134-1067", "410 Spring St, Denver, CO 80206", "1984-02-02", "standard", "active", "2017-07-07T11:11:00Z"),
]

FIX_ACCOUNTS = [
    # key, customer, type, nickname, balance, status, opened
    ("okafor-chk", "okafor", "checking", "Everyday", 2480.15, "open", "2017-05-03T10:20:00Z"),
    ("okafor-sav", "okafor", "savings", "Rainy day", 12650.00, "open", "2018-01-15T09:00:00Z"),
    ("reyes-chk", "reyes", "checking", None, 5310.42, "open", "2014-02-17T15:45:00Z"),
    ("natarajan-chk", "natarajan", "checking", None, 3902.88, "open", "2019-09-21T09:10:00Z"),
    ("herrera-chk", "herrera", "checking", None, 1875.00, "open", "2018-03-11T11:35:00Z"),
    ("fischer-chk", "fischer", "checking", None, 7420.10, "open", "2016-08-02T14:05:00Z"),
    ("liu-chk", "liu", "checking", "Main", 2210.00, "open", "2020-01-14T08:50:00Z"),
    ("liu-sav", "liu", "savings", "Savings", 8040.00, "open", "2020-01-14T08:55:00Z"),
    ("adeyemi-chk", "adeyemi", "checking", None, 1420.60, "open", "2015-06-28T16:25:00Z"),
    ("becker-chk", "becker", "checking", None, 3120.00, "open", "2019-04-07T12:15:00Z"),
    ("haddad-chk", "haddad", "checking", None, 2650.00, "open", "2013-10-30T10:05:00Z"),
    ("brennan-chk", "brennan", "checking", None, 1334.27, "open", "2021-02-19T13:30:00Z"),
    ("watanabe-chk", "watanabe", "checking", None, 4100.00, "open", "2016-11-11T09:55:00Z"),
    ("sato-chk", "sato", "checking", None, 2215.35, "open", "2018-07-04T17:40:00Z"),
    ("zahra-chk", "zahra", "checking", "Bills", 1560.00, "open", "2020-06-15T10:45:00Z"),
    ("zahra-sav", "zahra", "savings", "Vacation", 340.75, "open", "2021-03-02T09:00:00Z"),
    ("moreau-chk", "moreau", "checking", None, 2890.00, "open", "2021-09-09T15:20:00Z"),
    ("lindqvist-chk", "lindqvist", "checking", None, 960.00, "open", "2022-03-01T11:05:00Z"),
    ("bello-chk", "bello", "checking", None, 2200.00, "open", "2017-12-20T09:35:00Z"),
    ("bello-sav", "bello", "savings", "Emergency", 5400.00, "open", "2018-06-01T10:00:00Z"),
    ("kim-chk", "kim", "checking", None, 1024.60, "open", "2012-04-22T14:10:00Z"),
    ("kim-sav", "kim", "savings", None, 7800.00, "open", "2013-01-09T09:30:00Z"),
    ("fitzgerald-chk", "fitzgerald", "checking", None, 8200.00, "open", "2015-01-08T10:25:00Z"),
    ("lfitzgerald-chk", "lfitzgerald", "checking", None, 1300.00, "open", "2016-05-16T12:50:00Z"),
    ("zhang-chk", "zhang", "checking", None, 3300.00, "open", "2018-10-10T16:05:00Z"),
    ("thompson-chk", "thompson", "checking", None, 6125.40, "open", "2014-07-29T09:00:00Z"),
    ("mendez-chk", "mendez", "checking", None, 1890.00, "open", "2013-03-05T13:20:00Z"),
    ("vance-chk", "vance", "checking", None, 2750.00, "open", "2012-09-14T10:15:00Z"),
    ("johnson-chk", "johnson", "checking", None, 3900.00, "open", "2014-11-03T15:35:00Z"),
    ("johnson-sav", "johnson", "savings", None, 1200.00, "open", "2016-02-10T10:00:00Z"),
    ("tanaka-chk", "tanaka", "checking", None, 412.30, "open", "2022-08-18T09:25:00Z"),
    ("tanaka-sav", "tanaka", "savings", None, 2600.00, "open", "2022-08-18T09:30:00Z"),
    ("rossi-chk", "rossi", "checking", None, 1980.00, "open", "2017-02-26T11:55:00Z"),
    ("novak-chk", "novak", "checking", "Household", 6120.00, "open", "2012-12-12T12:05:00Z"),
    ("novak-sav", "novak", "savings", None, 21500.00, "open", "2013-06-30T10:00:00Z"),
    ("osei-chk", "osei", "checking", None, 4480.00, "open", "2019-11-30T10:35:00Z"),
    ("costa-chk", "costa", "checking", None, 2315.80, "open", "2016-04-01T09:05:00Z"),
    ("park-chk", "park", "checking", None, 10250.00, "open", "2011-10-21T14:45:00Z"),
    ("alvarez-chk", "alvarez", "checking", None, 1250.50, "open", "2019-01-23T10:20:00Z"),
    ("alvarez-sav", "alvarez", "savings", "Goals", 3400.25, "open", "2019-02-01T09:00:00Z"),
    ("alvarez-old", "alvarez", "savings", "Old car fund", 0.0, "closed", "2019-05-05T09:00:00Z"),
    ("karimi-chk", "karimi", "checking", None, 3610.90, "open", "2018-05-05T13:40:00Z"),
    ("karimi-side", "karimi", "checking", "Side hustle", 0.0, "open", "2023-02-14T10:00:00Z"),
    ("dubois-chk", "dubois", "checking", None, 4200.00, "open", "2016-12-01T09:15:00Z"),
    ("dubois-sav1", "dubois", "savings", "Travel", 1500.00, "open", "2017-03-01T09:00:00Z"),
    ("dubois-sav2", "dubois", "savings", "Taxes", 2600.00, "open", "2018-03-01T09:00:00Z"),
    ("dubois-sav3", "dubois", "savings", "Kids", 9800.00, "open", "2019-03-01T09:00:00Z"),
    ("dubois-chk2", "dubois", "checking", "Joint expenses", 730.00, "open", "2020-03-01T09:00:00Z"),
    ("ortiz-chk", "ortiz", "checking", None, 2045.00, "open", "2017-07-07T11:15:00Z"),
]
CLOSED_AT = {"alvarez-old": "2024-08-19T14:30:00Z"}

FIX_CARDS = [
    # key, customer, account, network, last4, status, status_reason, daily_limit, expires, issued
    ("okafor-c1", "okafor", "okafor-chk", "visa", "5120", "active", None, 1000, "2028-05", "2024-05-10T10:00:00Z"),
    ("reyes-c1", "reyes", "reyes-chk", "visa", "4417", "active", None, 1500, "2027-09", "2023-09-01T10:00:00Z"),
    ("reyes-c2", "reyes", "reyes-chk", "mastercard", "9021", "frozen", "customer_request", 2500, "2028-02", "2024-02-12T10:00:00Z"),
    ("natarajan-c1", "natarajan", "natarajan-chk", "visa", "3308", "active", None, 2000, "2028-11", "2024-11-03T10:00:00Z"),
    ("adeyemi-c1", "adeyemi", "adeyemi-chk", "mastercard", "5562", "active", None, 1200, "2027-06", "2023-06-20T10:00:00Z"),
    ("becker-c1", "becker", "becker-chk", "visa", "7710", "active", None, 1500, "2028-08", "2024-08-08T10:00:00Z"),
    ("haddad-c1", "haddad", "haddad-chk", "visa", "2245", "active", None, 1000, "2027-12", "2023-12-01T10:00:00Z"),
    ("brennan-c1", "brennan", "brennan-chk", "visa", "6034", "active", None, 1000, "2029-01", "2025-01-10T10:00:00Z"),
    ("zhang-c1", "zhang", "zhang-chk", "mastercard", "6190", "active", None, 1500, "2028-04", "2024-04-04T10:00:00Z"),
    ("vance-c1", "vance", "vance-chk", "visa", "6603", "frozen", "bank_fraud_hold", 1000, "2027-10", "2023-10-10T10:00:00Z"),
    ("johnson-c1", "johnson", "johnson-chk", "visa", "3471", "active", None, 1000, "2028-03", "2024-03-15T10:00:00Z"),
    ("tanaka-c1", "tanaka", "tanaka-chk", "visa", "8852", "active", None, 1000, "2029-06", "2025-06-01T10:00:00Z"),
    ("rossi-c1", "rossi", "rossi-chk", "mastercard", "2718", "active", None, 1500, "2028-09", "2024-09-09T10:00:00Z"),
    ("osei-c1", "osei", "osei-chk", "visa", "8834", "active", None, 3000, "2028-12", "2024-12-01T10:00:00Z"),
    ("karimi-c1", "karimi", "karimi-chk", "visa", "1298", "active", None, 1500, "2028-06", "2024-06-06T10:00:00Z"),
    ("karimi-c2", "karimi", "karimi-side", "mastercard", "7743", "active", None, 500, "2027-02", "2023-02-20T10:00:00Z"),
    ("ortiz-c1", "ortiz", "ortiz-chk", "visa", "4590", "active", None, 1500, "2028-10", "2024-10-10T10:00:00Z"),
    ("ortiz-c0", "ortiz", "ortiz-chk", "visa", "1183", "cancelled", "expired", 1500, "2024-10", "2020-10-10T10:00:00Z"),
]

FIX_BENEFICIARIES = [
    # key, customer, account, nickname, created
    ("herrera-b1", "herrera", "fischer-chk", "Landlord Lena", "2026-01-28T18:00:00Z"),
    ("watanabe-b1", "watanabe", "sato-chk", "Rina", "2019-03-03T12:00:00Z"),
    ("fitzgerald-b1", "fitzgerald", "lfitzgerald-chk", "Brother", "2017-08-08T08:00:00Z"),
    ("costa-b1", "costa", "park-chk", "Landlord", "2022-01-02T10:00:00Z"),
    ("sato-b1", "sato", "watanabe-chk", None, "2019-04-01T09:00:00Z"),
]

FIX_TRANSFERS = [
    # key, from, to, amount, memo, status, created, channel, disputed
    ("okafor-t1", "okafor-chk", "okafor-sav", 400.00, "Monthly savings", "completed", "2026-01-31T19:02:00Z", "mobile", False),
    ("okafor-t2", "okafor-chk", "okafor-sav", 400.00, "Monthly savings", "completed", "2026-02-28T19:05:00Z", "mobile", False),
    ("herrera-t1", "herrera-chk", "fischer-chk", 1200.00, "Deposit - apartment", "completed", "2026-02-10T14:22:00Z", "online", True),
    ("herrera-t2", "herrera-chk", "fischer-chk", 75.00, "Key copy", "completed", "2026-02-03T09:41:00Z", "online", False),
    ("liu-t1", "liu-chk", "liu-sav", 500.00, "Monthly savings", "completed", "2026-01-01T07:00:00Z", "online", False),
    ("liu-t2", "liu-chk", "liu-sav", 500.00, "Monthly savings", "completed", "2026-02-01T07:00:00Z", "online", False),
    ("liu-t3", "liu-chk", "liu-sav", 500.00, "Monthly savings", "pending", "2026-03-01T22:15:00Z", "online", False),
    ("watanabe-t1", "watanabe-chk", "sato-chk", 1250.00, "Dinner split", "completed", "2026-02-21T21:08:00Z", "mobile", False),
    ("watanabe-t2", "watanabe-chk", "sato-chk", 60.00, "Movie tickets", "completed", "2026-01-17T20:30:00Z", "mobile", False),
    ("sato-t1", "sato-chk", "watanabe-chk", 42.50, "Lunch", "completed", "2026-02-05T13:10:00Z", "mobile", False),
    ("fitzgerald-t1", "fitzgerald-chk", "lfitzgerald-chk", 800.00, "Birthday gift", "completed", "2025-12-20T10:00:00Z", "online", False),
    ("novak-t1", "novak-chk", "novak-sav", 1500.00, "Quarterly savings", "completed", "2026-01-05T08:00:00Z", "online", False),
    ("novak-t2", "novak-chk", "park-chk", 820.00, "Gutter repair", "completed", "2026-02-09T16:45:00Z", "online", False),
    ("novak-t3", "novak-chk", "novak-sav", 2000.00, "Bonus to savings", "completed", "2026-02-18T08:30:00Z", "mobile", False),
    ("novak-t4", "novak-chk", "fischer-chk", 315.40, "Piano lessons", "completed", "2026-02-24T17:20:00Z", "online", False),
    ("novak-t5", "novak-chk", "novak-sav", 650.00, "Vacation fund", "completed", "2026-02-27T07:55:00Z", "mobile", False),
    ("novak-t6", "novak-sav", "novak-chk", 300.00, "Top-up", "completed", "2026-02-28T12:00:00Z", "mobile", False),
    ("costa-t1", "costa-chk", "park-chk", 1150.00, "February rent", "completed", "2026-02-01T09:00:00Z", "online", False),
    ("tanaka-t1", "tanaka-chk", "tanaka-sav", 900.00, "Savings", "completed", "2026-02-15T20:00:00Z", "mobile", False),
    ("alvarez-t1", "alvarez-old", "alvarez-sav", 2210.00, "Closing old car fund", "completed", "2024-08-19T14:20:00Z", "branch", False),
]

FIX_TXNS = [
    # key, card, merchant, category, amount, status, created, disputed
    ("nat-x1", "natarajan-c1", "Whole Foods Market", "groceries", 212.10, "posted", "2026-01-20T18:12:00Z", False),
    ("nat-x2", "natarajan-c1", "Whole Foods Market", "groceries", 96.20, "posted", "2026-02-03T17:40:00Z", False),
    ("nat-x3", "natarajan-c1", "Netflix", "subscriptions", 15.49, "posted", "2026-02-15T03:00:00Z", False),
    ("nat-x4", "natarajan-c1", "Whole Foods Market", "groceries", 187.42, "posted", "2026-02-17T19:05:00Z", False),
    ("nat-x5", "natarajan-c1", "Blue Bottle Coffee", "dining", 6.75, "posted", "2026-02-18T08:15:00Z", False),
    ("nat-x6", "natarajan-c1", "Shell", "fuel", 54.10, "posted", "2026-02-20T12:30:00Z", False),
    ("nat-x7", "natarajan-c1", "Quantum Electronics Online", "electronics", 649.99, "posted", "2026-02-24T02:47:00Z", False),
    ("nat-x8", "natarajan-c1", "Whole Foods Market", "groceries", 58.33, "pending", "2026-03-01T18:20:00Z", False),
    ("zhang-x1", "zhang-c1", "Grand Hotel Lisboa", "travel", 842.00, "posted", "2025-12-12T11:00:00Z", False),
    ("zhang-x2", "zhang-c1", "Chipotle", "dining", 14.85, "posted", "2026-02-11T12:40:00Z", False),
    ("zhang-x3", "zhang-c1", "Uber", "transport", 23.10, "posted", "2026-02-19T22:05:00Z", False),
    ("rossi-x1", "rossi-c1", "Target", "shopping", 64.20, "posted", "2026-02-22T15:00:00Z", False),
    ("rossi-x2", "rossi-c1", "Hotel Bellavista", "travel", 389.00, "pending", "2026-03-01T10:30:00Z", False),
    ("osei-x1", "osei-c1", "Trader Joe's", "groceries", 72.45, "posted", "2026-02-25T18:00:00Z", False),
    ("osei-x2", "osei-c1", "LuxWatch Boutique", "shopping", 1349.00, "posted", "2026-02-27T04:12:00Z", False),
    ("osei-x3", "osei-c1", "Shell", "fuel", 48.00, "posted", "2026-02-28T09:30:00Z", False),
    ("reyes-x1", "reyes-c1", "Apple Store", "electronics", 1299.00, "posted", "2026-02-14T16:00:00Z", False),
    ("reyes-x2", "reyes-c2", "Delta Air Lines", "travel", 486.30, "posted", "2026-01-09T10:00:00Z", False),
    ("okafor-x1", "okafor-c1", "Safeway", "groceries", 83.12, "posted", "2026-02-26T18:40:00Z", False),
    ("johnson-x1", "johnson-c1", "Home Depot", "home", 129.99, "posted", "2026-02-20T11:00:00Z", False),
]

FIX_DISPUTES = [
    # key, customer, transfer, txn, amount, reason, description, status, created
    ("herrera-d1", "herrera", "herrera-t1", None, 1200.00, "other", "Paid a deposit for an apartment; the landlord never handed over the keys.", "rejected", "2026-02-12T10:05:00Z"),
]
# fmt: on


def build() -> dict[str, list[dict]]:
    rng = random.Random(SEED)
    ids = Ids(rng)
    rows: dict[str, list[dict]] = {t: [] for t in TABLES}
    fid: dict[str, str] = {}  # fixture key -> id

    # --- fixtures -------------------------------------------------------------------------
    for key, name, email, phone, address, dob, tier, status, created in FIX_CUSTOMERS:
        fid[key] = ids.fixture("customers", key)
        rows["customers"].append(
            {
                "customer_id": fid[key],
                "name": name,
                "email": email,
                "phone": phone,
                "address": address,
                "date_of_birth": dob,
                "tier": tier,
                "status": status,
                "created_at": created,
                "updated_at": None,
            }
        )
    for key, cust, kind, nickname, balance, status, opened in FIX_ACCOUNTS:
        fid[key] = ids.fixture("accounts", key)
        rows["accounts"].append(
            {
                "account_id": fid[key],
                "customer_id": fid[cust],
                "type": kind,
                "nickname": nickname,
                "balance": money(balance),
                "status": status,
                "opened_at": opened,
                "closed_at": CLOSED_AT.get(key),
            }
        )
    address_of = {r["customer_id"]: r["address"] for r in rows["customers"]}
    for key, cust, acct, network, last4, status, reason, limit, expires, issued in FIX_CARDS:
        fid[key] = ids.fixture("cards", key)
        rows["cards"].append(
            {
                "card_id": fid[key],
                "customer_id": fid[cust],
                "account_id": fid[acct],
                "network": network,
                "last4": last4,
                "status": status,
                "status_reason": reason,
                "daily_limit": money(limit),
                "expires": expires,
                "issued_at": issued,
                "replaces_card_id": None,
                "ship_to": address_of[fid[cust]],
            }
        )
    for key, cust, acct, nickname, created in FIX_BENEFICIARIES:
        fid[key] = ids.fixture("beneficiaries", key)
        owner = next(a["customer_id"] for a in rows["accounts"] if a["account_id"] == fid[acct])
        owner_name = next(c["name"] for c in rows["customers"] if c["customer_id"] == owner)
        rows["beneficiaries"].append(
            {
                "beneficiary_id": fid[key],
                "customer_id": fid[cust],
                "account_id": fid[acct],
                "name": owner_name,
                "nickname": nickname,
                "created_at": created,
            }
        )
    for key, src, dst, amount, memo, status, created, channel, disputed in FIX_TRANSFERS:
        fid[key] = ids.fixture("transfers", key)
        rows["transfers"].append(
            {
                "transfer_id": fid[key],
                "from_account_id": fid[src],
                "to_account_id": fid[dst],
                "amount": money(amount),
                "memo": memo,
                "status": status,
                "channel": channel,
                "created_at": created,
                "disputed": disputed,
            }
        )
    for key, card, merchant, category, amount, status, created, disputed in FIX_TXNS:
        fid[key] = ids.fixture("card_transactions", key)
        rows["card_transactions"].append(
            {
                "txn_id": fid[key],
                "card_id": fid[card],
                "merchant": merchant,
                "category": category,
                "amount": money(amount),
                "status": status,
                "created_at": created,
                "disputed": disputed,
            }
        )
    for key, cust, transfer, txn, amount, reason, description, status, created in FIX_DISPUTES:
        fid[key] = ids.fixture("disputes", key)
        rows["disputes"].append(
            {
                "dispute_id": fid[key],
                "customer_id": fid[cust],
                "transfer_id": fid.get(transfer) if transfer else None,
                "txn_id": fid.get(txn) if txn else None,
                "amount": money(amount),
                "reason": reason,
                "description": description,
                "status": status,
                "created_at": created,
            }
        )

    # --- background population -------------------------------------------------------------
    fixture_names = {c[1] for c in FIX_CUSTOMERS}
    emails = {c[2] for c in FIX_CUSTOMERS}

    def moment(start: dt.datetime, end: dt.datetime) -> dt.datetime:
        return start + dt.timedelta(seconds=rng.randrange(int((end - start).total_seconds())))

    customers = []
    while len(customers) < 110:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        name = f"{first} {last}"
        if name in fixture_names:
            continue
        base = f"{first}.{last}".lower()
        domain = rng.choice(["example.com", "example.net", "example.org"])
        email = f"{base}@{domain}"
        n = 2
        while email in emails:
            email = f"{base}{n}@{domain}"
            n += 1
        emails.add(email)
        city, state, zip3 = rng.choice(CITIES)
        created = moment(dt.datetime(2011, 1, 1), dt.datetime(2025, 10, 1))
        cust = {
            "customer_id": ids.new("customers"),
            "name": name,
            "email": email,
            "phone": f"+1-555-{rng.randrange(200, 1000):04d}-{rng.randrange(10000):04d}",
            "address": f"{rng.randrange(1, 2500)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}, {city}, {state} {zip3}{rng.randrange(100):02d}",
            "date_of_birth": moment(dt.datetime(1948, 1, 1), dt.datetime(2005, 1, 1)).strftime("%Y-%m-%d"),
            "tier": "premier" if rng.random() < 0.2 else "standard",
            "status": "locked" if rng.random() < 0.04 else "active",
            "created_at": ts(created),
            "updated_at": None,
        }
        customers.append((cust, created))
        rows["customers"].append(cust)

    accounts = []  # (row, owner created) for background accounts
    for cust, created in customers:
        kinds = ["checking"]
        if rng.random() < 0.6:
            kinds.append("savings")
        if rng.random() < 0.12:
            kinds.append("checking")
        if rng.random() < 0.08:
            kinds.append("savings")
        for kind in kinds:
            opened = moment(created, dt.datetime(2025, 12, 1))
            roll = rng.random()
            status = "closed" if roll < 0.05 else "frozen" if roll < 0.08 else "open"
            balance = 0.0 if status == "closed" else money(rng.lognormvariate(7.6, 1.0))
            acct = {
                "account_id": ids.new("accounts"),
                "customer_id": cust["customer_id"],
                "type": kind,
                "nickname": rng.choice(
                    [None, None, None, "Main", "Bills", "Travel", "Emergency", "Holiday", "Joint"]
                ),
                "balance": balance,
                "status": status,
                "opened_at": ts(opened),
                "closed_at": ts(moment(opened, dt.datetime(2026, 2, 1))) if status == "closed" else None,
            }
            accounts.append((acct, cust))
            rows["accounts"].append(acct)

    cards = []
    for acct, cust in accounts:
        if acct["type"] != "checking" or acct["status"] == "closed":
            continue
        n_cards = (1 if rng.random() < 0.9 else 0) + (1 if rng.random() < 0.3 else 0)
        for _ in range(n_cards):
            roll = rng.random()
            if roll < 0.08:
                status, reason = (
                    "frozen",
                    rng.choice(["customer_request", "suspected_fraud", "lost_or_stolen", "bank_fraud_hold"]),
                )
            elif roll < 0.16:
                status, reason = "cancelled", rng.choice(["lost", "stolen", "damaged", "expired"])
            else:
                status, reason = "active", None
            cap = 5000 if cust["tier"] == "premier" else 2000
            limit = rng.choice([x for x in (500, 750, 1000, 1500, 2000, 3000, 5000) if x <= cap])
            issued = moment(
                dt.datetime.strptime(acct["opened_at"], "%Y-%m-%dT%H:%M:%SZ"), dt.datetime(2026, 1, 15)
            )
            card = {
                "card_id": ids.new("cards"),
                "customer_id": cust["customer_id"],
                "account_id": acct["account_id"],
                "network": rng.choice(["visa", "mastercard"]),
                "last4": f"{rng.randrange(10000):04d}",
                "status": status,
                "status_reason": reason,
                "daily_limit": money(limit),
                "expires": f"{issued.year + 4}-{issued.month:02d}",
                "issued_at": ts(issued),
                "replaces_card_id": None,
                "ship_to": cust["address"],
            }
            cards.append(card)
            rows["cards"].append(card)

    open_accounts = [a for a, _ in accounts if a["status"] == "open"]
    by_customer: dict[str, list[dict]] = {}
    for acct, _ in accounts:
        by_customer.setdefault(acct["customer_id"], []).append(acct)

    bens: dict[str, list[str]] = {}
    pairs = set()
    while len(pairs) < 95:
        cust, _ = rng.choice(customers)
        target = rng.choice(open_accounts)
        if (
            target["customer_id"] == cust["customer_id"]
            or (cust["customer_id"], target["account_id"]) in pairs
        ):
            continue
        pairs.add((cust["customer_id"], target["account_id"]))
        owner = next(c for c, _ in customers if c["customer_id"] == target["customer_id"])
        created = moment(dt.datetime(2022, 1, 1), dt.datetime(2025, 12, 31))
        rows["beneficiaries"].append(
            {
                "beneficiary_id": ids.new("beneficiaries"),
                "customer_id": cust["customer_id"],
                "account_id": target["account_id"],
                "name": owner["name"],
                "nickname": rng.choice(
                    [
                        None,
                        None,
                        "Mom",
                        "Dad",
                        "Roommate",
                        "Landlord",
                        "Sister",
                        "Brother",
                        "Friend",
                        "Babysitter",
                    ]
                ),
                "created_at": ts(created),
            }
        )
        bens.setdefault(cust["customer_id"], []).append(target["account_id"])

    window = (dt.datetime(2025, 10, 1), dt.datetime(2026, 3, 2, 8, 0, 0))
    transfers = []
    while len(transfers) < 400:
        src = rng.choice(open_accounts)
        own = [a for a in by_customer[src["customer_id"]] if a["status"] == "open" and a is not src]
        roll = rng.random()
        if roll < 0.55 and own:
            dst = rng.choice(own)["account_id"]
        elif bens.get(src["customer_id"]):
            dst = rng.choice(bens[src["customer_id"]])
        elif own:
            dst = rng.choice(own)["account_id"]
        else:
            continue
        when = moment(*window)
        roll = rng.random()
        if when >= dt.datetime(2026, 2, 28) and roll < 0.5:
            status = "pending"
        elif roll < 0.03:
            status = "failed"
        elif roll < 0.05:
            status = "cancelled"
        else:
            status = "completed"
        transfer = {
            "transfer_id": ids.new("transfers"),
            "from_account_id": src["account_id"],
            "to_account_id": dst,
            "amount": money(
                rng.choice([25, 40, 50, 75, 100, 150, 200, 250, 300, 500, 750, 1000])
                if rng.random() < 0.5
                else rng.uniform(10, 2500)
            ),
            "memo": rng.choice(MEMOS),
            "status": status,
            "channel": rng.choice(["online", "mobile", "mobile", "branch"]),
            "created_at": ts(when),
            "disputed": False,
        }
        transfers.append((transfer, when))
    for transfer, _ in sorted(transfers, key=lambda pair: pair[1]):
        rows["transfers"].append(transfer)

    usable_cards = [c for c in cards if c["status"] != "cancelled"]
    txns = []
    for _ in range(470):
        card = rng.choice(usable_cards)
        merchant, category, low, high = rng.choice(MERCHANTS)
        when = moment(dt.datetime(2025, 11, 1), dt.datetime(2026, 3, 2, 8, 0, 0))
        roll = rng.random()
        status = (
            "pending"
            if when >= dt.datetime(2026, 2, 27) and roll < 0.6
            else "reversed"
            if roll < 0.02
            else "posted"
        )
        txns.append(
            (
                {
                    "txn_id": ids.new("card_transactions"),
                    "card_id": card["card_id"],
                    "merchant": merchant,
                    "category": category,
                    "amount": money(low if low == high else rng.uniform(low, high)),
                    "status": status,
                    "created_at": ts(when),
                    "disputed": False,
                },
                when,
            )
        )
    for txn, _ in sorted(txns, key=lambda pair: pair[1]):
        rows["card_transactions"].append(txn)

    # background disputes on completed transfers and posted card transactions
    account_owner = {a["account_id"]: a["customer_id"] for a in rows["accounts"]}
    card_owner = {c["card_id"]: c["customer_id"] for c in rows["cards"]}
    candidates = [("transfer", t) for t, _ in transfers if t["status"] == "completed"]
    candidates += [("txn", t) for t, _ in txns if t["status"] == "posted"]
    chosen = rng.sample(candidates, 36)
    for kind, item in chosen:
        item["disputed"] = True
        made = dt.datetime.strptime(item["created_at"], "%Y-%m-%dT%H:%M:%SZ")
        created = min(
            made + dt.timedelta(days=rng.randrange(1, 20), seconds=rng.randrange(86400)),
            dt.datetime(2026, 3, 2, 8),
        )
        age = (EPOCH - created).days
        status = (
            rng.choice(["resolved", "rejected"])
            if age > 45
            else rng.choice(["open", "under_review", "under_review"])
        )
        rows["disputes"].append(
            {
                "dispute_id": ids.new("disputes"),
                "customer_id": account_owner[item["from_account_id"]]
                if kind == "transfer"
                else card_owner[item["card_id"]],
                "transfer_id": item["transfer_id"] if kind == "transfer" else None,
                "txn_id": item["txn_id"] if kind == "txn" else None,
                "amount": item["amount"],
                "reason": rng.choice(["unauthorized", "incorrect_amount", "other"])
                if kind == "transfer"
                else rng.choice(DISPUTE_REASONS),
                "description": None,
                "status": status,
                "created_at": ts(created),
            }
        )
    return rows


def render(rows: dict[str, list[dict]]) -> dict[str, bytes]:
    return {
        table: "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows[table]).encode("utf-8")
        for table in TABLES
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with the files on disk instead of writing"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    opts = parser.parse_args()
    files = render(build())
    if opts.check:
        stale = [
            t
            for t, data in files.items()
            if not (opts.out / f"{t}.jsonl").is_file() or (opts.out / f"{t}.jsonl").read_bytes() != data
        ]
        for table in stale:
            print(f"stale: {opts.out / (table + '.jsonl')}", file=sys.stderr)
        return 1 if stale else 0
    opts.out.mkdir(parents=True, exist_ok=True)
    for table, data in files.items():
        (opts.out / f"{table}.jsonl").write_bytes(data)
    total = sum(data.count(b"\n") for data in files.values())
    print(f"wrote {total} rows in {len(files)} tables to {opts.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
