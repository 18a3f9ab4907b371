"""What the soak's simulated agents say: varied, realistic turns, so the selective filter has real work.

Each agent works on one task of one domain (travel, coding, data analysis, support, procurement, as in
memory/demo/data) and produces a deterministic sequence of turns from the seed: user preferences and
constraints, tool calls and their results (some errors), thoughts, decisions, answers, and some
chit-chat and small talk that the filter should drop. The same (seed, agent) gives the same texts, so
a retried request carries exactly the interaction it first carried.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CITIES = ["Lisbon", "Kyoto", "Shanghai", "Vienna", "Porto", "Seville", "Oslo", "Prague", "Montreal", "Hanoi"]
PEOPLE = ["Alice", "Bruno", "Chen Wei", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
FOODS = ["seafood", "peanuts", "gluten", "dairy", "shellfish", "sesame"]
HOTELS = ["Harbour View", "Old Town Inn", "Garden Court", "Riverside Suites", "Central Loft", "Hillside Lodge"]
FILES = ["reports/views.py", "billing/tasks.py", "api/serializers.py", "core/models.py", "etl/load.py",
         "settings/base.py", "tests/test_export.py", "docs/DEPENDENCIES.md"]
TABLES = ["orders", "customers", "invoices", "shipments", "events", "sessions"]
PRODUCTS = ["ThinkPad X1", "Dell U2723QE", "Logitech MX Keys", "Jabra Evolve2", "Herman Miller Aeron"]
ERRORS = ["TimeoutError after 30 s", "HTTP 503 from the upstream", "IntegrityError: duplicate key",
          "PermissionError on /var/data", "MemoryError while loading the file", "rate limit exceeded (429)"]
MONTHS = ["March", "April", "May", "June", "September", "October", "November"]
CHIT_CHAT = ["ok", "thanks", "sounds good", "got it", "great", "sure", "thank you", "alright"]
SMALL_TALK = ["By the way, the weather in {city} was lovely last weekend.",
              "Unrelated, but I just had a great coffee near the office this morning.",
              "By the way, {person} says hi; we had lunch together today."]

DOMAINS: dict[str, dict[str, list[str]]] = {
    "travel": {
        "task": ["Plan a {days}-day trip to {city} in {month} for {people} people within a {budget} EUR budget."],
        "user_input": [
            "My total budget is {budget} EUR, flights included, and it must not go over that.",
            "I prefer quiet hotels within walking distance of the old town, at most {price} EUR a night.",
            "Important: {person} is allergic to {food}, so every restaurant must avoid it.",
            "We land in {city} on {day} {month} around {hour}:00, please book an airport pickup.",
            "Change of plan: we now leave on {day} {month} instead, one day later.",
            "I hate early flights; nothing departing before {hour}:00 please.",
            "Can you find a restaurant with vegetarian options for {people} people on day {n}?",
            "Remember that {person} needs a room with step-free access.",
        ],
        "tool_call": [
            'hotel_search(city="{city}", max_price_per_night={price}, quiet=true, guests={people})',
            'flight_search(to="{city}", date="2025-{mm:02d}-{day:02d}", earliest_departure="{hour}:00")',
            'restaurant_search(city="{city}", exclude="{food}", party={people})',
            'transfer_book(city="{city}", arrival="{hour}:00", passengers={people})',
        ],
        "tool_result": [
            "{n} hotels found; best match {hotel} at {price} EUR/night, rated quiet, {m} min walk to the centre.",
            "Flight LX{code} departs {hour}:15, arrives {hour2}:40, {price} EUR per person, {n} seats left.",
            "hotel_book failed: {hotel} is sold out for {day} {month}; {n} alternatives nearby.",
            "Transfer confirmed: driver meets you at arrivals, booking ref TR-{code}.",
            "{n} restaurants without {food} within {m} minutes, top rated: Casa {person}.",
        ],
        "agent_thought": [
            "The budget leaves about {price} EUR per night once flights are paid; {hotel} fits.",
            "{person}'s {food} allergy rules out the harbour restaurants, so I will filter by cuisine.",
            "Since {hotel} is sold out I should look at the next cheapest quiet option.",
        ],
        "assistant_output": [
            "Decision: I will book {hotel} for {nights} nights at {price} EUR, total {total} EUR, within budget.",
            "Booked flight LX{code} on {day} {month}; the transfer is arranged for {hour}:00.",
            "Here is day {n}: morning walk through the old town, lunch at Casa {person} (no {food}).",
        ],
    },
    "coding": {
        "task": ["Add a CSV export of the filtered {table} report to the Django app without new dependencies."],
        "user_input": [
            "The export must handle {big} rows without loading them all into memory.",
            "We cannot add new packages until the Q{quarter} security review; use the standard library only.",
            "I prefer the streaming response approach; {person} reviewed it last time and liked it.",
            "The deadline for this is {day} {month}, the release branch is cut that morning.",
            "Please keep the column order the same as the table on screen: {cols}.",
            "Also, the file name should include the date, like {table}-2025-{mm:02d}-{day:02d}.csv.",
        ],
        "tool_call": [
            'read_file(path="{file}")',
            'run_tests(path="tests/test_export.py", k="{table}")',
            'grep(pattern="def export_{table}", path="{file}")',
            'write_file(path="{file}", lines={n})',
        ],
        "tool_result": [
            "{file}: {n} lines, the {table} view builds a queryset filtered by date and region.",
            "{n} passed, {m} failed: test_export_{table}_large raised {error}.",
            "run_tests failed with {error} in {file} line {line}.",
            "grep: 1 match in {file} line {line}: def export_{table}(request):",
            "Benchmark: {big} rows exported in {m}.{n} s, peak memory {mb} MB.",
        ],
        "agent_thought": [
            "Materialising {big} rows would need about {mb} MB; I will stream with iterator(chunk_size=2000).",
            "The failing test comes from the timezone of the date column, not from the CSV writer.",
            "{file} already has the filter logic, so the export can reuse the same queryset.",
        ],
        "assistant_output": [
            "Decision: I will use StreamingHttpResponse with csv.writer, no new dependency.",
            "I changed {file}: the export streams {table} rows in chunks of 2000; all {n} tests pass.",
            "The CSV now keeps the on-screen column order ({cols}) and the file name has the date.",
        ],
    },
    "data": {
        "task": ["Find why {table} revenue dropped {n}% in {month} and report the main causes."],
        "user_input": [
            "Only use the warehouse copy of {table}, never query production directly.",
            "The report must be ready by {day} {month} for {person}'s review meeting.",
            "I prefer charts with weekly buckets; daily ones were too noisy last time.",
            "Exclude test accounts, their ids start with T- and there are about {n} of them.",
            "Revenue should be in EUR at the monthly average rate, not the daily one.",
        ],
        "tool_call": [
            'sql(query="SELECT date_trunc(\'week\', created_at), sum(amount) FROM {table} GROUP BY 1")',
            'sql(query="SELECT region, count(*) FROM {table} WHERE month = {mm} GROUP BY region")',
            'load_csv(path="exports/{table}_{month}.csv")',
        ],
        "tool_result": [
            "{n} rows returned; week {m} shows a drop from {big} to {total} EUR.",
            "Query failed: {error}.",
            "Region {city} fell by {m}% while the others stayed flat; {n} orders missing.",
            "Loaded {big} rows from exports/{table}_{month}.csv in {m} s.",
        ],
        "agent_thought": [
            "The drop concentrates in {city}; a pricing change there on {day} {month} could explain it.",
            "Test accounts inflate the baseline by about {m}%, so I must exclude them first.",
        ],
        "assistant_output": [
            "Finding: {m}% of the drop comes from {city}, where the checkout failed with {error}.",
            "Decision: I will report weekly buckets in EUR at monthly average rates, test accounts excluded.",
        ],
    },
    "support": {
        "task": ["Resolve ticket #{code}: customer {person} cannot log in since the {month} update."],
        "user_input": [
            "{person} says the login page shows 'invalid token' since {day} {month}.",
            "The customer is on the Enterprise plan, so the SLA is {hour} hours; we must not miss it.",
            "{person} prefers email over phone, at {lower}@example.com.",
            "Never reset the password without the customer's confirmation, company policy.",
            "Their SSO provider is Okta and they have about {n} users affected.",
        ],
        "tool_call": [
            'lookup_account(email="{lower}@example.com")',
            'auth_logs(account="{code}", since="2025-{mm:02d}-{day:02d}")',
            'send_email(to="{lower}@example.com", template="sso_fix")',
        ],
        "tool_result": [
            "Account {code}: Enterprise plan, {n} seats, SSO via Okta, last login {day} {month}.",
            "{n} failed logins with error 'clock skew {m} s'; the Okta certificate expired on {day} {month}.",
            "send_email failed: {error}.",
            "Email sent to {lower}@example.com, message id {code}.",
        ],
        "agent_thought": [
            "The expired Okta certificate explains every failure since {day} {month}.",
            "The SLA leaves {hour} hours, so the fix has to go out today.",
        ],
        "assistant_output": [
            "Decision: I will rotate the SSO certificate and ask {person} to retry, no password reset.",
            "I emailed {person} the steps; {n} users should be able to log in again.",
        ],
    },
    "procurement": {
        "task": ["Order {n} laptops and monitors for the {city} office under {budget} EUR by {month}."],
        "user_input": [
            "The whole order must stay under {budget} EUR including VAT.",
            "We prefer {product}; {person} used it and liked the keyboard.",
            "Delivery has to arrive before {day} {month}, the new hires start that week.",
            "Only approved vendors, no marketplace sellers; the list is in vendors.xlsx.",
            "{person} is the cost-centre owner and must approve anything above {price} EUR.",
        ],
        "tool_call": [
            'vendor_quote(product="{product}", quantity={n}, ship_to="{city}")',
            'stock_check(product="{product}", warehouse="{city}")',
            'request_approval(approver="{person}", amount={total})',
        ],
        "tool_result": [
            "Quote Q-{code}: {n} × {product} at {price} EUR, delivery in {m} days.",
            "stock_check: only {m} units of {product} in stock, {n} more in {day} days.",
            "request_approval failed: {error}.",
            "Approval granted by {person} for {total} EUR.",
        ],
        "agent_thought": [
            "{n} units at {price} EUR is {total} EUR, which leaves room for the monitors.",
            "Stock is short, so splitting the order between two approved vendors avoids the delay.",
        ],
        "assistant_output": [
            "Decision: I will order {n} × {product} from quote Q-{code}, total {total} EUR.",
            "The order is placed; delivery to {city} is expected on {day} {month}.",
        ],
    },
}
# How often each kind of turn comes up (chit-chat and small talk are what the filter should drop).
KIND_WEIGHTS = {"user_input": 24, "tool_call": 15, "tool_result": 20, "agent_thought": 12, "assistant_output": 15,
                "observation": 4, "chit_chat": 7, "small_talk": 3}


@dataclass(frozen=True)
class Turn:
    kind: str
    content: str


def _values(rng: random.Random) -> dict[str, object]:
    person, month = rng.choice(PEOPLE), rng.choice(MONTHS)
    n, price = rng.randint(2, 40), rng.randrange(60, 900, 10)
    hour = rng.randint(6, 20)
    return {
        "city": rng.choice(CITIES), "person": person, "lower": person.split()[0].lower(), "food": rng.choice(FOODS),
        "hotel": rng.choice(HOTELS), "file": rng.choice(FILES), "table": rng.choice(TABLES),
        "product": rng.choice(PRODUCTS), "error": rng.choice(ERRORS), "month": month,
        "mm": MONTHS.index(month) + 3, "day": rng.randint(1, 28), "hour": hour, "hour2": min(hour + 3, 23),
        "n": n, "m": rng.randint(2, 60), "price": price, "total": n * price, "budget": rng.randrange(1500, 9000, 500),
        "people": rng.randint(1, 6), "days": rng.randint(2, 7), "nights": rng.randint(2, 6),
        "code": rng.randint(1000, 99999), "quarter": rng.randint(1, 4), "line": rng.randint(10, 400),
        "big": rng.choice([50_000, 2_000_000, 750_000]),
        "mb": rng.randint(40, 3000), "cols": ", ".join(rng.sample(["date", "region", "amount", "status", "id"], 4)),
    }


def agent_task(seed: int, agent: int) -> tuple[str, str]:
    """(domain, task) of an agent; agents cycle through the domains."""
    domain = sorted(DOMAINS)[agent % len(DOMAINS)]
    rng = random.Random(f"{seed}:{agent}:task")
    return domain, rng.choice(DOMAINS[domain]["task"]).format(**_values(rng))


def agent_turns(seed: int, agent: int, count: int) -> list[Turn]:
    """The `count` turns of one agent, deterministic in (seed, agent)."""
    domain, _task = agent_task(seed, agent)
    templates = DOMAINS[domain]
    rng = random.Random(f"{seed}:{agent}:turns")
    kinds, weights = zip(*KIND_WEIGHTS.items(), strict=True)
    turns = []
    for index in range(count):
        choice = rng.choices(kinds, weights)[0]
        values = _values(rng)
        if choice == "chit_chat":
            turns.append(Turn("user_input", rng.choice(CHIT_CHAT)))
        elif choice == "small_talk":
            turns.append(Turn("user_input", rng.choice(SMALL_TALK).format(**values)))
        elif choice == "observation":
            turns.append(Turn("observation", f"Step {index}: waiting {values['m']} s for the {domain} tool to answer; "
                                             f"{values['n']} requests queued."))
        else:
            turns.append(Turn(choice, rng.choice(templates[choice]).format(**values)))
    return turns
