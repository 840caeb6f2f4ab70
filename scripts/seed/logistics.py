"""Generate the seed rows of the bundled `logistics` domain.

Deterministic: one `random.Random(SEED)`, timestamps derived from a fixed epoch, no wall clock,
no uuid4. Running it twice writes byte-identical files.

    python scripts/seed/logistics.py            # writes domains/logistics/seed/<table>.jsonl
    python scripts/seed/logistics.py --out DIR  # writes somewhere else
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path

SEED = 20260302
EPOCH = datetime(2026, 1, 5, 7, 0, 0)  # first seed shipment; the domain clock starts 2026-03-02T09:00Z
LAST = datetime(2026, 3, 2, 8, 30, 0)  # nothing in the seed happens after this
OUT = Path(__file__).resolve().parents[2] / "domains" / "logistics" / "seed"

WAREHOUSES = [
    # id, name, city, country
    ("WH-AMS", "Amsterdam Schiphol Hub", "Amsterdam", "NL"),
    ("WH-BER", "Berlin Sud Depot", "Berlin", "DE"),
    ("WH-BRU", "Brussels Airport Crossdock", "Brussels", "BE"),
    ("WH-CPH", "Copenhagen Harbour Depot", "Copenhagen", "DK"),
    ("WH-DUB", "Dublin Port Depot", "Dublin", "IE"),
    ("WH-LYS", "Lyon Saint-Exupery Hub", "Lyon", "FR"),
    ("WH-MAD", "Madrid Coslada Hub", "Madrid", "ES"),
    ("WH-MIL", "Milan Linate Depot", "Milan", "IT"),
    ("WH-PRG", "Prague Ruzyne Depot", "Prague", "CZ"),
    ("WH-VIE", "Vienna Inzersdorf Hub", "Vienna", "AT"),
    ("WH-WAW", "Warsaw Okecie Depot", "Warsaw", "PL"),
    ("WH-ZRH", "Zurich Kloten Crossdock", "Zurich", "CH"),
]
CLOSED_WAREHOUSE = "WH-DUB"  # temporarily closed: no new shipments to or from it
FULL_WAREHOUSE = "WH-ZRH"  # inbound capacity exactly used up

SERVICE_LEVELS = [
    # code, name, base_fee, rate_per_kg, max_weight_kg, max_declared_value, transit_days
    ("economy", "Economy road", 4.5, 0.8, 30.0, 500.0, 5),
    ("standard", "Standard road", 6.0, 1.2, 30.0, 1000.0, 3),
    ("express", "Express next-day", 12.0, 2.1, 25.0, 2500.0, 1),
    ("freight", "Palletised freight", 45.0, 0.55, 1000.0, 10000.0, 7),
]
SERVICE_WEIGHTS = [30, 40, 20, 10]

TIERS = [
    # tier, discount_pct, credit_limit, weight
    ("standard", 0, 1500.0, 50),
    ("business", 5, 5000.0, 35),
    ("enterprise", 12, 20000.0, 15),
]

FIRST = [
    "Ada",
    "Bram",
    "Chiara",
    "Dario",
    "Elif",
    "Finn",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Katja",
    "Luca",
    "Mara",
    "Nils",
    "Olga",
    "Pavel",
    "Quentin",
    "Rosa",
    "Sven",
    "Tereza",
    "Ugo",
    "Vera",
    "Wiebke",
    "Xavier",
    "Yara",
    "Zofia",
    "Anton",
    "Britt",
    "Cas",
    "Dora",
]
LAST_NAMES = [
    "Byrne",
    "de Vries",
    "Rossi",
    "Keller",
    "Novak",
    "Jensen",
    "Moreau",
    "Garcia",
    "Schmidt",
    "Kowalski",
    "Dvorak",
    "Lindqvist",
    "Huber",
    "Peeters",
    "Costa",
    "Brennan",
    "Fischer",
    "Janssen",
    "Marino",
    "Svoboda",
    "Nowak",
    "Bauer",
    "Lambert",
    "Ortega",
    "Wagner",
]
CO_A = [
    "Alpine",
    "Baltic",
    "Canal",
    "Delta",
    "Ember",
    "Fjord",
    "Granite",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nordic",
    "Orchid",
    "Pioneer",
    "Quarry",
    "Riverside",
    "Summit",
    "Tundra",
    "Umber",
    "Vista",
    "Willow",
    "Zenith",
]
CO_B = [
    "Textiles",
    "Coffee Roasters",
    "Bike Parts",
    "Ceramics",
    "Books",
    "Electronics",
    "Pharma",
    "Garden Supply",
    "Outdoor Gear",
    "Toys",
    "Wines",
    "Cosmetics",
    "Lighting",
    "Tools",
]
CO_C = ["GmbH", "B.V.", "S.r.l.", "Ltd", "S.A.", "s.r.o.", "ApS", "AG"]
CONTENTS = [
    "apparel",
    "books",
    "electronics",
    "spare parts",
    "documents",
    "ceramics",
    "cosmetics",
    "coffee beans",
    "toys",
    "tools",
    "wine bottles",
    "medical supplies",
    "lamps",
    "sporting goods",
]
FRAGILE = {"electronics", "ceramics", "wine bottles", "lamps", "medical supplies"}


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def quote(base: float, rate: float, weight: float, discount_pct: float) -> float:
    """The same arithmetic as the `create_shipment` / `quote_shipping` tools."""
    return round((base + rate * weight) * (1 - discount_pct / 100), 2)


def generate() -> dict[str, list[dict]]:
    rng = random.Random(SEED)
    tables: dict[str, list[dict]] = {}

    tables["service_levels"] = [
        {
            "service_level": c,
            "name": n,
            "base_fee": b,
            "rate_per_kg": r,
            "max_weight_kg": w,
            "max_declared_value": v,
            "transit_days": d,
        }
        for c, n, b, r, w, v, d in SERVICE_LEVELS
    ]
    svc = {row["service_level"]: row for row in tables["service_levels"]}

    # customers -------------------------------------------------------------------------------
    customers = []
    used_names: set[str] = set()
    for i in range(1, 81):
        while True:
            company = f"{rng.choice(CO_A)} {rng.choice(CO_B)} {rng.choice(CO_C)}"
            if company not in used_names:
                used_names.add(company)
                break
        tier, discount, limit, _ = rng.choices(TIERS, weights=[t[3] for t in TIERS])[0]
        first, last = rng.choice(FIRST), rng.choice(LAST_NAMES)
        slug = company.split()[0].lower() + company.split()[1].lower()[:4]
        status = rng.choices(["active", "suspended", "closed"], weights=[86, 9, 5])[0]
        customers.append(
            {
                "customer_id": f"CUS-{i:04d}",
                "company_name": company,
                "contact_name": f"{first} {last}",
                "email": f"{first.lower()}.{slug}{i}@example.com",
                "phone": f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}",
                "status": status,
                "tier": tier,
                "discount_pct": discount,
                "credit_limit": limit,
                "balance_due": 0.0,
                "created_at": iso(
                    datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 700), hours=rng.randint(8, 17))
                ),
            }
        )
    cust = {c["customer_id"]: c for c in customers}
    active_customers = [c["customer_id"] for c in customers if c["status"] == "active"]

    # warehouses (capacity filled in after the shipments) ---------------------------------------
    warehouses = [
        {
            "warehouse_id": w,
            "name": n,
            "city": city,
            "country": cc,
            "status": "closed" if w == CLOSED_WAREHOUSE else "open",
            "capacity": 0,
        }
        for w, n, city, cc in WAREHOUSES
    ]
    open_wh = [w["warehouse_id"] for w in warehouses if w["status"] == "open"]

    # drivers and vehicles ---------------------------------------------------------------------
    drivers, vehicles = [], []
    d_i = v_i = 0
    for w, *_ in WAREHOUSES:
        for _ in range(3):
            d_i += 1
            drivers.append(
                {
                    "driver_id": f"DRV-{d_i:03d}",
                    "name": f"{rng.choice(FIRST)} {rng.choice(LAST_NAMES)}",
                    "home_warehouse_id": w,
                    "license_class": rng.choice(["B", "C1", "C"]),
                    "status": rng.choices(["available", "off_duty"], weights=[80, 20])[0],
                    "phone": f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}",
                }
            )
        kinds = [("truck", 3500.0), ("van", 900.0), rng.choice([("small_van", 450.0), ("cargo_bike", 80.0)])]
        for kind, cap in kinds:
            v_i += 1
            vehicles.append(
                {
                    "vehicle_id": f"VEH-{v_i:03d}",
                    "plate": f"{w[3:]}-{rng.randint(100, 999)}-{rng.choice('ABCDEFGHJKLMNPRSTVXYZ')}{rng.choice('ABCDEFGHJKLMNPRSTVXYZ')}",
                    "vehicle_type": kind,
                    "capacity_kg": cap,
                    "warehouse_id": w,
                    "status": rng.choices(["active", "maintenance"], weights=[85, 15])[0],
                }
            )
    drv = {d["driver_id"]: d for d in drivers}

    # shipments, parcels, assignments, tracking -----------------------------------------------
    shipments, parcels, assignments, events = [], [], [], []
    vehicle_load: dict[str, float] = {v["vehicle_id"]: 0.0 for v in vehicles}
    vehicle_driver: dict[str, str] = {}
    driver_active: dict[str, int] = {d["driver_id"]: 0 for d in drivers}
    p_i = 0
    a_i = 0

    def event(ship_id: str, kind: str, wh: str | None, t: datetime, note: str | None = None) -> None:
        events.append(
            {
                "shipment_id": ship_id,
                "event_type": kind,
                "warehouse_id": wh,
                "occurred_at": iso(t),
                "note": note,
            }
        )

    span = (LAST - EPOCH).total_seconds()
    created_times = sorted(EPOCH + timedelta(seconds=rng.randint(0, int(span) - 3600)) for _ in range(300))
    for n, created in enumerate(created_times, start=1):
        sid = f"SHP-{10000 + n}"
        customer_id = rng.choice(active_customers if rng.random() < 0.93 else list(cust))
        origin = rng.choice(open_wh)
        destination = rng.choice([w for w in open_wh if w != origin])
        if created < datetime(2026, 1, 20) and rng.random() < 0.05:
            # a few old shipments touched the Dublin depot before it closed
            origin = CLOSED_WAREHOUSE
        level = rng.choices([s[0] for s in SERVICE_LEVELS], weights=SERVICE_WEIGHTS)[0]
        s = svc[level]
        n_parcels = rng.choices([1, 2, 3, 4], weights=[45, 30, 15, 10])[0]
        if level == "freight":
            weights = [round(rng.uniform(40, 240), 1) for _ in range(n_parcels)]
        else:
            cap = s["max_weight_kg"] / n_parcels
            weights = [round(rng.uniform(0.3, cap * 0.9), 1) for _ in range(n_parcels)]
        weight = round(sum(weights), 1)
        declared = float(rng.choice([50, 80, 120, 150, 200, 250, 300, 400, 450])) * (
            1 if level in ("economy", "standard") else rng.choice([1, 2, 4])
        )
        declared = min(declared, s["max_declared_value"])
        age_days = (LAST - created).total_seconds() / 86400
        if age_days > 14:
            status = rng.choices(["delivered", "cancelled", "returned", "lost"], weights=[84, 7, 5, 4])[0]
        elif age_days > 5:
            status = rng.choices(["delivered", "in_transit", "cancelled", "created"], weights=[50, 35, 7, 8])[
                0
            ]
        else:
            status = rng.choices(["created", "in_transit", "cancelled"], weights=[45, 50, 5])[0]
        if origin == CLOSED_WAREHOUSE and status in ("created", "in_transit"):
            status = "delivered"
        contents = [rng.choice(CONTENTS) for _ in weights]
        row = {
            "shipment_id": sid,
            "customer_id": customer_id,
            "origin_warehouse_id": origin,
            "destination_warehouse_id": destination,
            "service_level": level,
            "status": status,
            "weight_kg": weight,
            "declared_value": declared,
            "cost": quote(s["base_fee"], s["rate_per_kg"], weight, cust[customer_id]["discount_pct"]),
            "recipient_name": f"{rng.choice(FIRST)} {rng.choice(LAST_NAMES)}",
            "driver_id": None,
            "vehicle_id": None,
            "created_at": iso(created),
            "delivered_at": None,
            "received_by": None,
            "cancel_reason": None,
            "reroute_count": 0,
        }
        event(sid, "created", origin, created)
        if status == "cancelled":
            row["cancel_reason"] = rng.choice(["customer_request", "duplicate", "address_error"])
            event(
                sid,
                "cancelled",
                origin,
                min(created + timedelta(hours=rng.randint(1, 20)), created + (LAST - created) / 2),
            )
        elif status != "created":
            # picked up by a driver of the origin warehouse with a vehicle of that warehouse
            picked = min(created + timedelta(hours=rng.randint(2, 30)), created + (LAST - created) / 2)
            picked = picked.replace(microsecond=0)
            candidates = [d["driver_id"] for d in drivers if d["home_warehouse_id"] == origin]
            vcands = [v for v in vehicles if v["warehouse_id"] == origin and v["capacity_kg"] >= weight]
            driver_id = rng.choice(candidates)
            if status == "in_transit":
                ok = [d for d in candidates if drv[d]["status"] != "off_duty" and driver_active[d] < 4]
                vcands = [
                    v
                    for v in vcands
                    if v["status"] == "active" and vehicle_load[v["vehicle_id"]] + weight <= v["capacity_kg"]
                ]
                if not ok:
                    status = row["status"] = "created"
                    vcands = []
                else:
                    driver_id = rng.choice(ok)
                    vcands = [
                        v for v in vcands if vehicle_driver.get(v["vehicle_id"], driver_id) == driver_id
                    ]
                if not vcands:
                    status = row["status"] = "created"
            if status != "created":
                vehicle = rng.choice(vcands)
                row["driver_id"], row["vehicle_id"] = driver_id, vehicle["vehicle_id"]
                a_i += 1
                arow = {
                    "assignment_id": f"RTE-{a_i:05d}",
                    "shipment_id": sid,
                    "driver_id": driver_id,
                    "vehicle_id": vehicle["vehicle_id"],
                    "weight_kg": weight,
                    "status": "completed",
                    "assigned_at": iso(picked),
                    "completed_at": None,
                }
                assignments.append(arow)
                event(sid, "picked_up", origin, picked)
                departed = picked + timedelta(hours=rng.randint(1, 6))
                if status == "in_transit":
                    arow["status"] = "active"
                    driver_active[driver_id] += 1
                    drv[driver_id]["status"] = "on_route"
                    vehicle_load[vehicle["vehicle_id"]] += weight
                    vehicle_driver[vehicle["vehicle_id"]] = driver_id
                    if departed < LAST and rng.random() < 0.7:
                        event(sid, "departed", origin, departed)
                        arrived = departed + timedelta(hours=rng.randint(8, 40))
                        if arrived < LAST and rng.random() < 0.5:
                            event(sid, "arrived", destination, arrived)
                else:
                    # a finished journey: durations in hours, squeezed to end before LAST
                    legs: list[tuple[str, str | None, float, str | None]] = [
                        ("departed", origin, rng.randint(1, 6), None)
                    ]
                    if status == "lost":
                        legs.append(
                            (
                                "exception",
                                None,
                                24 * rng.randint(3, 6),
                                "Declared lost: no scan since departure",
                            )
                        )
                    else:
                        legs.append(
                            ("arrived", destination, rng.randint(8, 24 * s["transit_days"] + 8), None)
                        )
                    if status == "delivered":
                        legs.append(("out_for_delivery", destination, rng.randint(1, 14), None))
                        legs.append(("delivered", destination, rng.randint(1, 8), None))
                    elif status == "returned":
                        legs.append(
                            (
                                "exception",
                                destination,
                                3,
                                rng.choice(
                                    [
                                        "Recipient refused delivery",
                                        "Address not found",
                                        "Recipient unreachable after 3 attempts",
                                    ]
                                ),
                            )
                        )
                        legs.append(("returned", origin, 24 * rng.randint(2, 5), None))
                    room = (LAST - timedelta(hours=1) - picked).total_seconds() / 3600
                    scale = min(1.0, room / sum(leg[2] for leg in legs))
                    t = picked
                    for kind, wh, hours, note in legs:
                        t = t + timedelta(minutes=int(hours * scale * 60))
                        event(sid, kind, wh, t, note)
                    arow["completed_at"] = iso(t)
                    if status == "delivered":
                        row["delivered_at"] = iso(t)
                        row["received_by"] = (
                            row["recipient_name"]
                            if rng.random() < 0.8
                            else f"{rng.choice(FIRST)} {rng.choice(LAST_NAMES)}"
                        )
                    elif status == "lost":
                        arow["status"] = "aborted"
        for w, c in zip(weights, contents, strict=True):
            p_i += 1
            parcels.append(
                {
                    "parcel_id": f"PCL-{p_i:06d}",
                    "shipment_id": sid,
                    "weight_kg": w,
                    "contents": c,
                    "fragile": c in FRAGILE,
                }
            )
        shipments.append(row)

    # capacity: active inbound count + slack; the full warehouse has no slack ----------------
    inbound = {w["warehouse_id"]: 0 for w in warehouses}
    for sh in shipments:
        if sh["status"] in ("created", "in_transit"):
            inbound[sh["destination_warehouse_id"]] += 1
    for w in warehouses:
        slack = 0 if w["warehouse_id"] == FULL_WAREHOUSE else rng.choice([5, 8, 10, 15, 20, 25])
        w["capacity"] = inbound[w["warehouse_id"]] + slack

    # balances: unpaid charges of the last weeks; one customer close to the credit limit -----
    for sh in shipments:
        if sh["status"] != "cancelled" and sh["created_at"] >= "2026-02-01":
            c = cust[sh["customer_id"]]
            c["balance_due"] = round(c["balance_due"] + sh["cost"], 2)
    standard_active = [c for c in customers if c["status"] == "active" and c["tier"] == "standard"]
    near = standard_active[3]
    near["balance_due"] = round(near["credit_limit"] - 18.4, 2)

    # claims ----------------------------------------------------------------------------------
    claims = []
    delivered = [sh for sh in shipments if sh["status"] == "delivered"]
    lost = [sh for sh in shipments if sh["status"] == "lost"]
    picks = rng.sample(delivered, 18) + rng.sample(lost, max(1, len(lost) // 2))
    picks.sort(key=lambda sh: sh["shipment_id"])
    for k, sh in enumerate(picks, start=1):
        kind = "lost" if sh["status"] == "lost" else "damaged"
        amount = round(sh["declared_value"] * rng.choice([0.25, 0.4, 0.5, 0.75, 1.0]), 2)
        base = sh["delivered_at"] or sh["created_at"]
        filed = datetime.strptime(base, "%Y-%m-%dT%H:%M:%SZ") + timedelta(days=rng.randint(1, 6))
        filed = min(filed, LAST - timedelta(hours=1))
        status = rng.choices(["open", "approved", "rejected"], weights=[45, 35, 20])[0]
        approved = {"approved": round(amount * rng.choice([0.5, 1.0]), 2), "rejected": 0.0}.get(status)
        claims.append(
            {
                "claim_id": f"CLM-{k:04d}",
                "shipment_id": sh["shipment_id"],
                "customer_id": sh["customer_id"],
                "claim_type": kind,
                "amount": amount,
                "status": status,
                "approved_amount": approved,
                "filed_at": iso(filed),
                "resolved_at": None if status == "open" else iso(filed + timedelta(days=2)),
            }
        )

    # one large open claim, above the desk's 1,000 EUR approval authority
    big = [
        sh
        for sh in delivered
        if sh["declared_value"] >= 1600 and sh["shipment_id"] not in {c["shipment_id"] for c in claims}
    ]
    sh = rng.choice(big)
    filed = datetime.strptime(sh["delivered_at"], "%Y-%m-%dT%H:%M:%SZ") + timedelta(days=2)
    claims.append(
        {
            "claim_id": f"CLM-{len(claims) + 1:04d}",
            "shipment_id": sh["shipment_id"],
            "customer_id": sh["customer_id"],
            "claim_type": "damaged",
            "amount": round(sh["declared_value"] * 0.8, 2),
            "status": "open",
            "approved_amount": None,
            "filed_at": iso(min(filed, LAST - timedelta(hours=1))),
            "resolved_at": None,
        }
    )

    events.sort(key=lambda e: (e["occurred_at"], e["shipment_id"]))
    tables["tracking_events"] = [{"event_id": i, **e} for i, e in enumerate(events, start=1)]
    tables["customers"] = customers
    tables["warehouses"] = warehouses
    tables["drivers"] = drivers
    tables["vehicles"] = vehicles
    tables["shipments"] = shipments
    tables["parcels"] = parcels
    tables["route_assignments"] = assignments
    tables["claims"] = claims
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, rows in sorted(generate().items()):
        with open(args.out / f"{name}.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        total += len(rows)
        print(f"{name:18} {len(rows):5}")
    print(f"{'total':18} {total:5}")


if __name__ == "__main__":
    main()
