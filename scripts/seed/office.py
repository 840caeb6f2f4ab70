"""Generate the seed data of the bundled `office` domain.

Deterministic: one `random.Random` with a fixed seed, no wall clock, no uuid.
Running it twice writes byte-identical files.

    python scripts/seed/office.py            # writes domains/office/seed/<table>.jsonl

The simulated clock of the domain starts at 2026-03-02T09:00:00Z (a Monday): events run
from two weeks before to four weeks after that moment, mail from the month before it.
A few hand-written "story" rows at the top give the tasks stable, distinctive targets;
the rest is random filler drawn from the same generator.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

SEED = 20260302
OUT = Path(__file__).resolve().parents[2] / "domains" / "office" / "seed"
NOW = dt.datetime(2026, 3, 2, 9, 0, 0)  # the domain clock's start, not the wall clock
MAIL_DOMAIN = "halcyon.example"

TEAMS = ["engineering", "design", "product", "sales", "marketing", "finance", "people", "legal"]
TITLES = {
    "engineering": ["Software Engineer", "Senior Software Engineer", "Staff Engineer", "SRE"],
    "design": ["Product Designer", "UX Researcher", "Senior Designer"],
    "product": ["Product Manager", "Senior Product Manager", "Program Manager"],
    "sales": ["Account Executive", "Sales Engineer", "Account Manager"],
    "marketing": ["Marketing Manager", "Content Strategist", "Growth Analyst"],
    "finance": ["Financial Analyst", "Accountant", "Controller"],
    "people": ["Recruiter", "People Partner", "Office Manager"],
    "legal": ["Counsel", "Paralegal", "Compliance Analyst"],
}
LEAD_TITLES = {
    "engineering": "Engineering Director",
    "design": "Head of Design",
    "product": "VP Product",
    "sales": "Sales Director",
    "marketing": "Head of Marketing",
    "finance": "Finance Director",
    "people": "Head of People",
    "legal": "General Counsel",
}
TIMEZONES = [
    "America/New_York",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Europe/London",
    "Europe/Berlin",
    "Asia/Singapore",
]
FIRST = [
    "Aiko",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kavya",
    "Lars",
    "Mireille",
    "Nikhil",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Stefan",
    "Tamsin",
    "Umar",
    "Vera",
    "Wendell",
    "Ximena",
    "Yusuf",
    "Zora",
    "Anselm",
    "Beatriz",
    "Cormac",
    "Delphine",
    "Emeka",
    "Freya",
    "Gideon",
    "Hana",
    "Ivo",
    "Jolene",
    "Kenji",
    "Leona",
    "Matteo",
    "Noor",
]
LAST = [
    "Achterberg",
    "Bellamy",
    "Castellano",
    "Drummond",
    "Eklund",
    "Fairweather",
    "Gallardo",
    "Holloway",
    "Ishikawa",
    "Jovanovic",
    "Kowalczyk",
    "Lindqvist",
    "Marchetti",
    "Nakamura",
    "Okonkwo",
    "Petrov",
    "Quintero",
    "Rasmussen",
    "Szabo",
    "Thorne",
    "Underhill",
    "Valdivia",
    "Whitfield",
    "Yilmaz",
    "Zelenko",
    "Abernathy",
    "Brennan",
    "Cavendish",
    "Dufresne",
    "Esposito",
]

# Hand-written people: (person_id, first, last, team, title, timezone, manager_id or None)
STORY_PEOPLE = [
    ("PER-1001", "Margot", "Ellery", "people", "Chief Executive Officer", "America/New_York", None),
    ("PER-1002", "Priya", "Raman", "product", "VP Product", "America/New_York", "PER-1001"),
    ("PER-1003", "Tomasz", "Wierzbicki", "engineering", "Engineering Director", "Europe/Berlin", "PER-1001"),
    ("PER-1004", "Odile", "Marchand", "design", "Head of Design", "Europe/London", "PER-1001"),
    ("PER-1005", "Samuel", "Adeyemi", "sales", "Sales Director", "America/Chicago", "PER-1001"),
    ("PER-1006", "Lucia", "Ferreira", "marketing", "Head of Marketing", "America/Los_Angeles", "PER-1001"),
    ("PER-1007", "Henrik", "Dahl", "finance", "Finance Director", "Europe/Berlin", "PER-1001"),
    ("PER-1008", "Naledi", "Mokoena", "legal", "General Counsel", "Europe/London", "PER-1001"),
    ("PER-1009", "Wren", "Castillo", "product", "Senior Product Manager", "America/New_York", "PER-1002"),
    ("PER-1010", "Arjun", "Mehta", "engineering", "Staff Engineer", "Asia/Singapore", "PER-1003"),
    ("PER-1011", "Fiona", "Gallagher", "design", "Product Designer", "Europe/London", "PER-1004"),
    ("PER-1012", "Dario", "Bianchi", "engineering", "Software Engineer", "Europe/Berlin", "PER-1003"),
]
TEAM_LEADS = {
    "product": "PER-1002",
    "engineering": "PER-1003",
    "design": "PER-1004",
    "sales": "PER-1005",
    "marketing": "PER-1006",
    "finance": "PER-1007",
    "legal": "PER-1008",
    "people": "PER-1001",
}

ROOMS = [
    # room_id, name, building, floor, capacity, has_video
    ("RM-101", "Everest", "HQ", 1, 12, True),
    ("RM-102", "Kilimanjaro", "HQ", 1, 8, True),
    ("RM-103", "Matterhorn", "HQ", 1, 4, False),
    ("RM-201", "Denali", "HQ", 2, 20, True),
    ("RM-202", "Aconcagua", "HQ", 2, 6, True),
    ("RM-203", "Elbrus", "HQ", 2, 4, False),
    ("RM-301", "Fuji", "HQ", 3, 10, True),
    ("RM-302", "Olympus", "HQ", 3, 6, False),
    ("RM-A1", "Harbor", "Annex", 1, 8, True),
    ("RM-A2", "Lighthouse", "Annex", 1, 4, True),
    ("RM-A3", "Quay", "Annex", 2, 14, False),
    ("RM-A4", "Tidewater", "Annex", 2, 6, True),
]

MEETING_TOPICS = [
    "Sprint planning",
    "Design review",
    "Roadmap sync",
    "Pipeline review",
    "Budget check-in",
    "Customer escalation",
    "Hiring debrief",
    "Launch readiness",
    "Retrospective",
    "Architecture review",
    "Contract review",
    "Campaign kickoff",
    "Quarterly forecast",
    "Onboarding session",
    "Incident postmortem",
    "Pricing workshop",
    "Vendor call",
    "Usability study readout",
    "OKR review",
    "Security training",
]
OFFSITE_LOCATIONS = ["Video call", "Video call", "Video call", "Cafe Lumen", "Client site"]
MAIL_TOPICS = [
    ("Q1 budget", "the Q1 budget numbers"),
    ("Offsite agenda", "the offsite agenda"),
    ("Hiring plan", "the hiring plan for next quarter"),
    ("Release notes", "the draft release notes"),
    ("Customer feedback", "the latest customer feedback"),
    ("Travel approval", "my travel approval request"),
    ("Contract redlines", "the contract redlines"),
    ("Launch checklist", "the launch checklist"),
    ("Expense report", "my expense report"),
    ("Design mockups", "the new design mockups"),
    ("Interview schedule", "the interview schedule"),
    ("Security review", "the security review findings"),
    ("Pricing proposal", "the pricing proposal"),
    ("Quarterly forecast", "the quarterly forecast"),
    ("Vendor invoice", "the vendor invoice"),
]
MAIL_OPENERS = [
    "Could you take a look at {t} before Friday?",
    "Quick question about {t}.",
    "Sharing {t} for your review.",
    "Following up on {t} from last week.",
    "Do you have five minutes to talk about {t}?",
    "Thanks for the notes on {t}, I have updated the doc.",
]
MAIL_CLOSERS = ["Thanks!", "Best,", "Cheers,", "Talk soon,", "Regards,"]
CUSTOM_FOLDERS = ["Projects", "Receipts", "Travel", "Hiring", "Customers", "Reports"]


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def workdays(first: dt.date, last: dt.date) -> list[dt.date]:
    days, d = [], first
    while d <= last:
        if d.weekday() < 5:
            days.append(d)
        d += dt.timedelta(days=1)
    return days


def build(rng: random.Random) -> dict[str, list[dict]]:
    # ---------------------------------------------------------------- people
    people: list[dict] = []
    used_names: set[tuple[str, str]] = set()
    for pid, first, last, team, title, tz, manager in STORY_PEOPLE:
        used_names.add((first, last))
        people.append(
            {
                "person_id": pid,
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@{MAIL_DOMAIN}",
                "team": team,
                "title": title,
                "timezone": tz,
                "manager_id": manager,
            }
        )
    n = len(people)
    while len(people) < 64:
        n += 1
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if (first, last) in used_names:
            continue
        used_names.add((first, last))
        team = TEAMS[(n - 13) % len(TEAMS)]
        people.append(
            {
                "person_id": f"PER-{1000 + n}",
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@{MAIL_DOMAIN}",
                "team": team,
                "title": rng.choice(TITLES[team]),
                "timezone": rng.choice(TIMEZONES),
                "manager_id": TEAM_LEADS[team],
            }
        )
    by_team: dict[str, list[str]] = {t: [] for t in TEAMS}
    for p in people:
        by_team[p["team"]].append(p["person_id"])
    all_ids = [p["person_id"] for p in people]

    # ------------------------------------------------------------- calendars
    calendars: list[dict] = []
    primary: dict[str, str] = {}
    for p in people:
        cid = "CAL-" + p["person_id"][4:]
        primary[p["person_id"]] = cid
        calendars.append(
            {"calendar_id": cid, "owner_id": p["person_id"], "name": p["name"], "kind": "primary"}
        )
    team_cal: dict[str, str] = {}
    for i, team in enumerate(TEAMS):
        cid = f"CAL-T{i + 1:02d}"
        team_cal[team] = cid
        calendars.append(
            {
                "calendar_id": cid,
                "owner_id": TEAM_LEADS[team],
                "name": f"{team.capitalize()} team",
                "kind": "team",
            }
        )

    rooms = [
        {
            "room_id": rid,
            "name": name,
            "building": building,
            "floor": floor,
            "capacity": cap,
            "has_video": video,
        }
        for rid, name, building, floor, cap, video in ROOMS
    ]
    room_by_id = {r["room_id"]: r for r in rooms}

    # ---------------------------------------------------------------- events
    events: list[dict] = []
    attendees: list[dict] = []
    bookings: dict[str, list[tuple[dt.datetime, dt.datetime]]] = {r["room_id"]: [] for r in rooms}
    next_att = [1]

    def room_free(room_id: str, start: dt.datetime, end: dt.datetime) -> bool:
        return all(not (s < end and e > start) for s, e in bookings[room_id])

    def add_event(
        eid: str,
        title: str,
        organizer: str,
        start: dt.datetime,
        minutes: int,
        room_id: str | None,
        location: str | None,
        invitees: list[str],
        *,
        status: str = "confirmed",
        calendar_id: str | None = None,
        responses: dict[str, str] | None = None,
        description: str | None = None,
    ) -> None:
        end = start + dt.timedelta(minutes=minutes)
        if room_id is not None and status == "confirmed":
            assert room_free(room_id, start, end), (eid, room_id)
            bookings[room_id].append((start, end))
        created = min(start, NOW) - dt.timedelta(days=rng.randint(3, 20), hours=rng.randint(0, 8))
        events.append(
            {
                "event_id": eid,
                "calendar_id": calendar_id or primary[organizer],
                "title": title,
                "description": description,
                "starts_at": iso(start),
                "ends_at": iso(end),
                "location": room_by_id[room_id]["name"] if room_id else location,
                "room_id": room_id,
                "organizer_id": organizer,
                "status": status,
                "created_at": iso(created),
                "cancelled_at": iso(created + dt.timedelta(days=1)) if status == "cancelled" else None,
                "cancel_reason": "Plans changed." if status == "cancelled" else None,
            }
        )
        responses = responses or {}
        for pid in [organizer, *invitees]:
            if pid == organizer:
                resp = "accepted"
            elif pid in responses:
                resp = responses[pid]
            elif start < NOW:
                resp = rng.choices(["accepted", "declined", "tentative"], [7, 2, 1])[0]
            else:
                resp = rng.choices(["accepted", "declined", "tentative", "needs_action"], [4, 1, 1, 4])[0]
            attendees.append(
                {
                    "attendance_id": next_att[0],
                    "event_id": eid,
                    "person_id": pid,
                    "response": resp,
                    "responded_at": None
                    if resp == "needs_action"
                    else iso(created + dt.timedelta(hours=rng.randint(1, 40))),
                    "comment": None,
                }
            )
            next_att[0] += 1

    d = dt.datetime
    # Story events (fixed ids, referenced by tasks).
    add_event(
        "EVT-9001",
        "Q2 roadmap review",
        "PER-1002",
        d(2026, 3, 4, 14, 0),
        90,
        "RM-101",
        None,
        ["PER-1009", "PER-1003", "PER-1004", "PER-1010", "PER-1011"],
        responses={
            "PER-1009": "accepted",
            "PER-1003": "declined",
            "PER-1004": "tentative",
            "PER-1010": "needs_action",
            "PER-1011": "accepted",
        },
        description="Walk through the Q2 roadmap draft before it goes to the leadership team.",
    )
    add_event(
        "EVT-9002",
        "Mobile app design critique",
        "PER-1011",
        d(2026, 3, 5, 10, 0),
        60,
        "RM-202",
        None,
        ["PER-1004", "PER-1009", "PER-1012"],
        responses={"PER-1004": "accepted", "PER-1009": "needs_action", "PER-1012": "needs_action"},
    )
    add_event(
        "EVT-9003",
        "Payments API architecture review",
        "PER-1010",
        d(2026, 3, 6, 15, 0),
        60,
        "RM-301",
        None,
        ["PER-1003", "PER-1012", "PER-1009"],
        responses={"PER-1003": "accepted", "PER-1012": "tentative", "PER-1009": "needs_action"},
    )
    add_event(
        "EVT-9004",
        "Vendor contract walkthrough",
        "PER-1008",
        d(2026, 3, 9, 11, 0),
        60,
        None,
        "Video call",
        ["PER-1007", "PER-1005"],
        responses={"PER-1007": "needs_action", "PER-1005": "accepted"},
    )
    add_event(
        "EVT-9005",
        "Sales kickoff dry run",
        "PER-1005",
        d(2026, 3, 10, 16, 0),
        120,
        "RM-201",
        None,
        ["PER-1006", "PER-1002", "PER-1009"],
        status="cancelled",
        responses={"PER-1006": "accepted", "PER-1002": "accepted", "PER-1009": "needs_action"},
    )
    add_event(
        "EVT-9006",
        "1:1 Wren / Priya",
        "PER-1002",
        d(2026, 3, 3, 13, 0),
        30,
        "RM-103",
        None,
        ["PER-1009"],
        responses={"PER-1009": "accepted"},
    )
    add_event(
        "EVT-9007",
        "Engineering all-hands",
        "PER-1003",
        d(2026, 3, 11, 17, 0),
        60,
        "RM-201",
        None,
        [p for p in by_team["engineering"] if p != "PER-1003"][:14],
        calendar_id=team_cal["engineering"],
    )
    add_event(
        "EVT-9008",
        "Brand refresh sync",
        "PER-1006",
        d(2026, 2, 24, 15, 0),
        60,
        "RM-102",
        None,
        ["PER-1011", "PER-1004"],
    )

    # Filler events.
    days = workdays(dt.date(2026, 2, 16), dt.date(2026, 3, 27))
    k = 0
    while len(events) < 236:
        k += 1
        day = rng.choice(days)
        start = d(day.year, day.month, day.day, rng.randint(8, 17), rng.choice([0, 30]))
        minutes = rng.choice([30, 30, 45, 60, 60, 60, 90, 120])
        team = rng.choice(TEAMS)
        organizer = rng.choice(by_team[team])
        pool = [p for p in by_team[team] if p != organizer]
        others = [p for p in all_ids if p != organizer and p not in pool]
        size = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8])
        invitees = rng.sample(pool, min(size, len(pool)))
        if rng.random() < 0.3:
            invitees.append(rng.choice([p for p in others if p not in invitees]))
        status = "cancelled" if rng.random() < 0.07 else "confirmed"
        room_id = None
        if rng.random() < 0.65:
            fits = [
                r["room_id"]
                for r in rooms
                if r["capacity"] >= len(invitees) + 1
                and (
                    status == "cancelled"
                    or room_free(r["room_id"], start, start + dt.timedelta(minutes=minutes))
                )
            ]
            if fits:
                room_id = rng.choice(fits)
        topic = rng.choice(MEETING_TOPICS)
        title = topic if rng.random() < 0.5 else f"{topic}: {team}"
        add_event(
            f"EVT-{2000 + k}",
            title,
            organizer,
            start,
            minutes,
            room_id,
            None if room_id else rng.choice(OFFSITE_LOCATIONS),
            invitees,
            status=status,
        )

    events.sort(key=lambda e: e["event_id"])
    # attendees keep insertion order (attendance_id ascending)

    # --------------------------------------------------------------- folders
    folders: list[dict] = []
    folder_of: dict[tuple[str, str], str] = {}
    custom_of: dict[str, str] = {}
    fno = 0
    for p in people:
        for kind, name in [("inbox", "Inbox"), ("sent", "Sent"), ("archive", "Archive"), ("trash", "Trash")]:
            fno += 1
            fid = f"FLD-{10000 + fno}"
            folder_of[(p["person_id"], kind)] = fid
            folders.append({"folder_id": fid, "owner_id": p["person_id"], "name": name, "kind": kind})
    for p in people:
        if p["person_id"] in ("PER-1009",) or rng.random() < 0.35:
            fno += 1
            fid = f"FLD-{10000 + fno}"
            name = "Projects" if p["person_id"] == "PER-1009" else rng.choice(CUSTOM_FOLDERS)
            custom_of[p["person_id"]] = fid
            folders.append({"folder_id": fid, "owner_id": p["person_id"], "name": name, "kind": "custom"})

    # -------------------------------------------------------------- messages
    messages: list[dict] = []
    email_of = {p["person_id"]: p["email"] for p in people}
    name_of = {p["person_id"]: p["name"] for p in people}
    mno = [0]

    def deliver(
        sender: str,
        to: list[str],
        subject: str,
        body: str,
        sent_at: dt.datetime,
        *,
        in_reply_to: str | None = None,
        placement: dict[str, tuple[str, bool, bool]] | None = None,
    ) -> dict[str, str]:
        """Write the sender's Sent copy and one copy per recipient; return {owner: message_id}."""
        placement = placement or {}
        ids: dict[str, str] = {}
        copies = [(sender, "sent", True, False)]
        for r in to:
            if r in placement:
                kind, read, starred = placement[r]
            else:
                age_days = (NOW - sent_at).days
                read = rng.random() < (0.95 if age_days > 7 else 0.55)
                roll = rng.random()
                kind = "inbox"
                if read and roll < 0.2:
                    kind = "archive"
                elif read and roll < 0.25:
                    kind = "trash"
                elif read and roll < 0.32 and r in custom_of:
                    kind = "custom"
                starred = rng.random() < 0.1
            copies.append((r, kind, read, starred))
        for owner, kind, read, starred in copies:
            mno[0] += 1
            mid = f"MSG-{20000 + mno[0]}"
            ids[owner] = mid
            folder = custom_of[owner] if kind == "custom" else folder_of[(owner, kind)]
            messages.append(
                {
                    "message_id": mid,
                    "owner_id": owner,
                    "folder_id": folder,
                    "sender_id": sender,
                    "sender_email": email_of[sender],
                    "to_emails": [email_of[r] for r in to],
                    "subject": subject,
                    "body": body,
                    "sent_at": iso(sent_at),
                    "is_read": read,
                    "is_starred": starred,
                    "in_reply_to": in_reply_to,
                }
            )
        return ids

    # Story mail (referenced by tasks).
    deliver(
        "PER-1007",
        ["PER-1009"],
        "Q1 budget variance",
        "Hi Wren, the product line is 4,300 EUR over budget for Q1, mostly contractor hours. "
        "Can you confirm the numbers by Thursday? Henrik",
        d(2026, 2, 27, 16, 20),
        placement={"PER-1009": ("inbox", False, False)},
    )
    deliver(
        "PER-1010",
        ["PER-1009", "PER-1012"],
        "Payments API rollout date",
        "We are targeting 2026-03-18 for the Payments API v2 rollout, pending the architecture review. Arjun",
        d(2026, 2, 26, 8, 5),
        placement={"PER-1009": ("inbox", True, False), "PER-1012": ("inbox", False, False)},
    )
    deliver(
        "PER-1004",
        ["PER-1009"],
        "Onboarding flow mockups",
        "Mockups for the new onboarding flow are in the shared drive, folder ONB-7. Feedback welcome. Odile",
        d(2026, 3, 1, 19, 45),
        placement={"PER-1009": ("inbox", False, False)},
    )
    deliver(
        "PER-1005",
        ["PER-1009", "PER-1002"],
        "Customer escalation: Bluefin Corp",
        "Bluefin Corp reports failed exports since Tuesday. Ticket SUP-4471. Can product weigh in? Samuel",
        d(2026, 2, 25, 11, 30),
        placement={"PER-1009": ("archive", True, True), "PER-1002": ("inbox", True, False)},
    )
    deliver(
        "PER-1002",
        ["PER-1009"],
        "Promo calendar",
        "Wren, please send me the promo calendar for April when you have it. Priya",
        d(2026, 2, 20, 9, 10),
        placement={"PER-1009": ("inbox", True, False)},
    )
    deliver(
        "PER-1012",
        ["PER-1010"],
        "Flaky integration tests",
        "The ledger integration tests failed 6 times this week, all on the currency rounding case. Dario",
        d(2026, 2, 28, 10, 0),
        placement={"PER-1010": ("inbox", False, False)},
    )

    # Filler mail.
    start_mail = d(2026, 2, 2, 8, 0)
    span_minutes = int((NOW - start_mail).total_seconds() // 60) - 1
    while len(messages) < 700:
        sender = rng.choice(all_ids)
        team = next(p["team"] for p in people if p["person_id"] == sender)
        pool = [p for p in by_team[team] if p != sender] or [p for p in all_ids if p != sender]
        to = rng.sample(pool, min(rng.choice([1, 1, 1, 2, 2, 3]), len(pool)))
        subject, phrase = rng.choice(MAIL_TOPICS)
        body = (
            f"Hi {name_of[to[0]].split()[0]}, "
            + rng.choice(MAIL_OPENERS).format(t=phrase)
            + f" {rng.choice(MAIL_CLOSERS)} {name_of[sender].split()[0]}"
        )
        sent_at = start_mail + dt.timedelta(minutes=rng.randint(0, span_minutes))
        ids = deliver(sender, to, subject, body, sent_at)
        if rng.random() < 0.15:
            replier = to[0]
            reply_at = sent_at + dt.timedelta(minutes=rng.randint(10, 600))
            if reply_at < NOW:
                deliver(
                    replier,
                    [sender],
                    f"Re: {subject}",
                    f"Thanks {name_of[sender].split()[0]}, will do. {name_of[replier].split()[0]}",
                    reply_at,
                    in_reply_to=ids[replier],
                )

    messages.sort(key=lambda m: m["message_id"])
    return {
        "people": people,
        "rooms": rooms,
        "calendars": calendars,
        "events": events,
        "attendees": attendees,
        "folders": folders,
        "messages": messages,
    }


def main() -> None:
    tables = build(random.Random(SEED))
    OUT.mkdir(parents=True, exist_ok=True)
    total = 0
    for table, rows in tables.items():
        path = OUT / f"{table}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        total += len(rows)
        print(f"{table:10s} {len(rows):5d} rows  {path.stat().st_size:7d} bytes")
    print(f"{'total':10s} {total:5d} rows")


if __name__ == "__main__":
    main()
