"""Sentence templates by domain, and the slot fillers they use.

A template is text with `{slot}` fields and `[a|b|c]` alternatives (an empty alternative makes a
part optional). Numbers, money, dates, times, phone numbers and the like are filled in their
*written* form ("$12.50", "3/5", "(555) 123-4567") so that the text normaliser is exercised on
realistic input.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from sonare.text import sentence_words as w

Filler = Callable[[random.Random], str]


def _pick(options: tuple[str, ...]) -> Filler:
    return lambda rng: rng.choice(options)


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _grouped(n: int) -> str:
    return f"{n:,}"


def _price(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        return f"${rng.randint(1, 400)}.{rng.choice(['99', '50', '95', '00', '25', '49', _digits(rng, 2)])}"
    if kind < 0.65:
        return f"${rng.choice([1, 2, 5, 10, 15, 20, 25, 40, 60, 75, 100, 150, 200, 500, rng.randint(1, 999)])}"
    if kind < 0.75:
        return f"${_grouped(rng.randint(1000, 99999))}"
    if kind < 0.85:
        return f"{rng.choice('€£')}{rng.randint(1, 500)}{rng.choice(['', '.50', '.99', '.' + _digits(rng, 2)])}"
    if kind < 0.93:
        return f"${rng.randint(1, 99)}.{rng.randint(1, 9)} {rng.choice(['million', 'billion'])}"
    return f"${rng.randint(1, 9)}.{rng.randint(1, 9)}{rng.choice('MKB')}"


def _date(rng: random.Random) -> str:
    year = rng.randint(2018, 2029)
    month = rng.randint(1, 12)
    day = rng.randint(1, 28)
    month_name = w.MONTHS[month - 1]
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    forms = (
        f"{year}-{month:02d}-{day:02d}",
        f"{month}/{day}/{year}",
        f"{month}/{day}",
        f"{month_name} {day}",
        f"{month_name} {day}{suffix}",
        f"{month_name} {day}, {year}",
        f"{w.WEEKDAYS[rng.randrange(7)]}, {month_name} {day}{suffix}",
        f"the {day}{suffix}",
        f"{month_name[:3]}. {day}",
    )
    return rng.choice(forms)


def _time(rng: random.Random) -> str:
    hour = rng.randint(1, 12)
    minute = rng.choice([0, 0, 15, 30, 45, 5, 10, 20, 40, 50, rng.randint(0, 59)])
    forms = (
        f"{hour}:{minute:02d} {rng.choice(['am', 'pm', 'AM', 'PM', 'a.m.', 'p.m.'])}",
        f"{hour}{rng.choice(['am', 'pm'])}",
        f"{rng.randint(0, 23)}:{minute:02d}",
        f"{hour}:{minute:02d}",
        f"{hour} o'clock",
    )
    return rng.choice(forms)


def _phone(rng: random.Random) -> str:
    area, mid, last = _digits(rng, 3).replace("0", "5", 1), _digits(rng, 3), _digits(rng, 4)
    forms = (
        f"({area}) {mid}-{last}",
        f"{area}-{mid}-{last}",
        f"{area}.{mid}.{last}",
        f"+1 {area} {mid} {last}",
        f"1-800-{mid}-{last}",
        f"{mid}-{last}",
    )
    return rng.choice(forms)


def _reference_number(rng: random.Random) -> str:
    forms = (
        _digits(rng, rng.randint(6, 10)),
        f"{rng.choice('ABCDEFGHJKLMNPRSTWXZ')}{_digits(rng, rng.randint(5, 8))}",
        f"{rng.choice('ABCDEFGHJKLMNPRSTWXZ')}{rng.choice('ABCDEFGHJKLMNPRSTWXZ')}-{_digits(rng, 4)}",
        f"#{_digits(rng, rng.randint(4, 7))}",
    )
    return rng.choice(forms)


def _measure(units: tuple[str, ...], largest: int) -> Filler:
    """A number and a unit abbreviation, written the ways people write them ("5 km", "3kg")."""

    def fill(rng: random.Random) -> str:
        value = rng.choice([str(rng.randint(1, largest)), f"{rng.randint(0, largest // 10)}.{rng.randint(1, 9)}"])
        return f"{value}{rng.choice(['', ' ', ' '])}{rng.choice(units)}"

    return fill


def _temperature(rng: random.Random) -> str:
    return f"{rng.randint(-20, 105)}°{rng.choice('FFC')}"


def _percent(rng: random.Random) -> str:
    return rng.choice([f"{rng.randint(1, 100)}%", f"{rng.randint(0, 30)}.{rng.randint(1, 9)}%"])


def _year(rng: random.Random) -> str:
    return str(rng.choice([rng.randint(1900, 1999), rng.randint(2000, 2009), rng.randint(2010, 2030)]))


def _ordinal(rng: random.Random, largest: int = 120) -> str:
    n = rng.randint(1, largest)
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _number(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        return str(rng.randint(2, 99))
    if kind < 0.6:
        return str(rng.randint(100, 999))
    if kind < 0.8:
        return _grouped(rng.randint(1000, 2_000_000))
    if kind < 0.9:
        return f"{rng.randint(0, 99)}.{_digits(rng, rng.randint(1, 2))}"
    return f"-{rng.randint(1, 60)}"


def _small_count(rng: random.Random) -> str:
    n = rng.randint(2, 12)
    words = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
    return rng.choice([str(n), words[n - 2]])


def _fraction(rng: random.Random) -> str:
    return rng.choice(["1/2", "1/3", "2/3", "1/4", "3/4", "1/8", "3/8", "5/8", "7/8", "1/5", "2/5"])


def _range(rng: random.Random) -> str:
    low = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50])
    return f"{low}-{low + rng.choice([1, 2, 3, 5, 10]) * max(1, low // 5)}"


def _duration(rng: random.Random) -> str:
    n = rng.randint(2, 90)
    return f"{n} {rng.choice(['minutes', 'hours', 'days', 'weeks', 'months', 'seconds'])}"


def _email(rng: random.Random) -> str:
    first, last = rng.choice(w.FIRST_NAMES).lower(), rng.choice(w.LAST_NAMES).lower().replace("'", "")
    user = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}{rng.randint(1, 99)}", first])
    domain = rng.choice(["example.com", "mail.com", "company.org", "school.edu", "inbox.net", "work.io"])
    return f"{user.replace(' ', '')}@{domain}"


def _url(rng: random.Random) -> str:
    site = rng.choice(["example.com", "acme.org", "shop.example.net", "help.example.com", "mybank.com"])
    path = rng.choice(["", "/help", "/returns", "/account", "/pay", "/docs/setup", "/contact-us"])
    return f"{rng.choice(['', 'www.', 'https://', 'https://www.'])}{site}{path}"


def _street_address(rng: random.Random) -> str:
    number = rng.choice([str(rng.randint(1, 99)), str(rng.randint(100, 9999)), str(rng.randint(10000, 40000))])
    street = rng.choice(w.STREET_NAMES)
    kind = rng.choice(w.STREET_TYPES + w.STREET_ABBREVIATIONS)
    unit = rng.choice(
        [
            "",
            "",
            "",
            f", Apt. {rng.randint(1, 40)}{rng.choice(['', 'B', 'C'])}",
            f", Suite {rng.randint(100, 900)}",
        ]
    )
    return f"{number} {street} {kind}{unit}"


def _full_address(rng: random.Random) -> str:
    return f"{_street_address(rng)}, {rng.choice(w.CITIES)}, {rng.choice(w.STATE_CODES)} {_digits(rng, 5)}"


def _person(rng: random.Random) -> str:
    return f"{rng.choice(w.FIRST_NAMES)} {rng.choice(w.LAST_NAMES)}"


def _titled_person(rng: random.Random) -> str:
    suffix = rng.choice(["", "", "", "", " Jr.", " Sr."])
    return f"{rng.choice(w.PROFESSIONAL_TITLES)} {rng.choice(w.LAST_NAMES)}{suffix}"


def _roman_title(rng: random.Random) -> str:
    return rng.choice([
        f"King {rng.choice(['Henry', 'Louis', 'George', 'Edward', 'Charles', 'Richard'])} "
        f"{rng.choice(['II', 'III', 'IV', 'V', 'VI', 'VIII', 'XIV'])}",
        f"Queen {rng.choice(['Elizabeth', 'Victoria', 'Mary'])} {rng.choice(['I', 'II'])}",
        f"Pope {rng.choice(['John', 'Pius', 'Leo'])} {rng.choice(['XII', 'XIII', 'XXIII'])}",
        f"World War {rng.choice(['I', 'II'])}",
        f"Super Bowl {rng.choice(['XL', 'LII', 'LV', 'LVIII'])}",
    ])  # fmt: skip


def _list_of(options: tuple[str, ...]) -> Filler:
    def fill(rng: random.Random) -> str:
        items = rng.sample(options, rng.randint(2, 5))
        if len(items) == 2:
            return f"{items[0]} and {items[1]}"
        return ", ".join(items[:-1]) + rng.choice([", and ", " and "]) + items[-1]

    return fill


SLOTS: dict[str, Filler] = {
    "first": _pick(w.FIRST_NAMES),
    "last": _pick(w.LAST_NAMES),
    "person": _person,
    "titled": _titled_person,
    "city": _pick(w.CITIES),
    "state": _pick(w.STATES),
    "country": _pick(w.COUNTRIES),
    "company": _pick(w.COMPANIES),
    "product": _pick(w.PRODUCTS),
    "products": _list_of(w.PRODUCTS),
    "medication": _pick(w.MEDICATIONS),
    "symptom": _pick(w.SYMPTOMS),
    "body_part": _pick(w.BODY_PARTS),
    "provider": _pick(w.HEALTH_PROVIDERS),
    "food": _pick(w.FOODS),
    "foods": _list_of(w.FOODS),
    "animal": _pick(w.ANIMALS),
    "job": _pick(w.JOBS),
    "color": _pick(w.COLORS),
    "adjective": _pick(w.ADJECTIVES),
    "place": _pick(w.PLACES),
    "activity": _pick(w.ACTIVITIES),
    "weekday": _pick(w.WEEKDAYS),
    "month": _pick(w.MONTHS),
    "item": _pick(w.GAME_ITEMS),
    "items": _list_of(w.GAME_ITEMS),
    "game_place": _pick(w.GAME_PLACES),
    "creature": _pick(w.GAME_CREATURES),
    "device": _pick(w.ASSISTANT_THINGS),
    "topic": _pick(w.TOPICS),
    "acronym": _pick(w.ACRONYMS_SPELLED + w.ACRONYMS_SAID),
    "price": _price,
    "date": _date,
    "time": _time,
    "phone": _phone,
    "ref": _reference_number,
    "distance": _measure(("km", "miles", "mi", "m", "ft", "yards", "cm"), 200),
    "weight": _measure(("kg", "lbs", "lb", "oz", "g", "pounds"), 150),
    "volume": _measure(("ml", "mL", "L", "fl oz", "gallons", "cups"), 500),
    "dose": _measure(("mg", "mg", "mcg", "ml", "units"), 500),
    "data_size": _measure(("MB", "GB", "TB", "KB"), 900),
    "speed": _measure(("mph", "km/h", "knots"), 120),
    "energy": _measure(("kWh", "kW", "W", "V", "Hz"), 900),
    "temperature": _temperature,
    "percent": _percent,
    "year": _year,
    "decade": lambda rng: f"{rng.randint(190, 202)}0s",
    "ordinal": _ordinal,
    "day_ordinal": lambda rng: _ordinal(rng, 31),
    "small_number": lambda rng: str(rng.randint(1, 99)),
    "number": _number,
    "count": _small_count,
    "fraction": _fraction,
    "range": _range,
    "duration": _duration,
    "email": _email,
    "url": _url,
    "street_address": _street_address,
    "address": _full_address,
    "zip": lambda rng: _digits(rng, 5),
    "last4": lambda rng: _digits(rng, 4),
    "roman_title": _roman_title,
}

TEMPLATES: dict[str, tuple[str, ...]] = {
    "contact_centre": (
        "Thank you for calling {company}, my name is {first}, how can I help you today?",
        "[Can|Could] I get your account number, please?",
        "I'm calling about my bill from {date}; it says I owe {price}.",
        "Your order number is {ref}, and it should arrive by {date}.",
        "I see a charge of {price} on {date} that I don't recognize.",
        "Can you confirm the last four digits of your card, please? [Sure, it's|It's] {last4}.",
        "Please hold while I transfer you to our billing department.",
        "I've been on hold for {duration} and nobody has picked up.",
        "The best number to reach me is {phone}.",
        "You can also email us at {email} or visit {url}.",
        "Your confirmation number is {ref}; please keep it for your records.",
        "I'd like to cancel my subscription, effective {date}.",
        "We've issued a refund of {price}, which should appear in {range} business days.",
        "Is there anything else I can help you with today?",
        "I'm sorry for the inconvenience, {first}; let me see what I can do.",
        "The technician can come {weekday} between {time} and {time}.",
        "My internet has been down since {time} this morning.",
        "I moved to {address}, so please update my billing address.",
        "Your current balance is {price}, and the minimum payment is {price}.",
        "Your call may be recorded for quality and training purposes.",
        "For billing, press 1; for technical support, press 2; to speak to an agent, press 0.",
        "Can you spell your last name for me? It's {last}.",
        "I need to reset my password, but I no longer have access to {email}.",
        "Your ticket number is {ref}, and a specialist will call you back within {duration}.",
        "We apologize, but our offices are closed on {weekday+s}.",
        "I'm going to escalate this to my supervisor, {titled}.",
        "The warranty on your {product} expires on {date}.",
        "We can offer you {percent} off your next {count} months.",
        "Please verify your date of birth and your zip code, {zip}.",
        "The package was delivered at {time} and signed for by {person}.",
    ),
    "healthcare": (
        "I'd like to schedule an appointment with {titled} for next {weekday}.",
        "I've had {symptom} for about {duration} now.",
        "Take {count} tablets of {medication} twice a day with food.",
        "The doctor prescribed {dose} of {medication} every {range} hours.",
        "My temperature this morning was {temperature}.",
        "Your blood pressure is 120 over 80, which is normal.",
        "Are you allergic to any medications, such as {medication}?",
        "Your appointment with the {provider} is on {date} at {time}.",
        "I need a refill on my {medication} prescription; the number is {ref}.",
        "Please arrive {range} minutes early to fill out your paperwork.",
        "On a scale of 1 to 10, how bad is the pain in your {body_part}?",
        "I hurt my {body_part} playing soccer on {weekday}.",
        "The pharmacy at {street_address} closes at {time}.",
        "Your lab results came back, and your cholesterol is slightly high.",
        "Have you had {symptom} or {symptom} in the last {count} days?",
        "The {provider} wants to see you again in {count} weeks.",
        "Don't take {medication} together with {medication} without asking your doctor.",
        "My daughter has {symptom} and a fever of {temperature}.",
        "Your copay for this visit is {price}.",
        "We'll need your insurance member ID, which starts with {ref}.",
        "Do you have any history of heart disease in your family?",
        "Please drink plenty of fluids and get some rest.",
        "If the symptoms get worse, call us at {phone} or go to the emergency room.",
        "She's been taking {medication} since {year}.",
        "The nurse will call you with the results in {range} days.",
    ),
    "games": (
        "You found a {adjective} {item} in {game_place}!",
        "Watch out, there's a {creature} behind you!",
        "Equip the {item} before you fight the {creature}.",
        "You need {count} more {item+s} to craft a {item}.",
        "The {creature} drops a {item} about {percent} of the time.",
        "Meet me at {game_place} in {duration}.",
        "Level {small_number} unlocked; you earned {number} experience points.",
        "My inventory is full of {items}.",
        "Can you cover me while I grab the {item}?",
        "That {creature} has {number} hit points and resists fire damage.",
        "The quest says to bring the {item} to the old {job} in {game_place}.",
        "Press the left trigger to block, then attack!",
        "We wiped on the final boss again; let's try a different strategy.",
        "Sell the {item} to the merchant for {number} gold coins.",
        "The {day_ordinal} floor of the tower is full of {creature+s}.",
        "Good game, everyone; same time tomorrow?",
        "Your high score is {number}, and you are ranked {ordinal} in the world.",
        "Don't open the chest, it's a trap!",
        "I'll trade you my {item} for your {item}.",
        "Respawning in {count} seconds.",
    ),
    "sales": (
        "Our {product} is on sale for {price}, down from {price}.",
        "If you order today, you'll get {percent} off and free shipping.",
        "The {color} {product} is back in stock at our {city} store.",
        "Would you like to add a protection plan for {price} a year?",
        "We shipped {products} on {date}.",
        "Revenue grew {percent} last quarter to {price}.",
        "Our {city} office closed a deal worth {price} with {company}.",
        "The {product} weighs {weight} and comes in {color}, {color}, and {color}.",
        "Can I interest you in our premium plan? It's only {price} a month.",
        "Buy {count}, get one free, this weekend only.",
        "I can offer you a discount if you sign the contract by {date}.",
        "The demo is scheduled for {weekday} at {time} with {person} from {company}.",
        "Prices start at {price} and go up to {price} for the deluxe model.",
        "We have {number} units left in the warehouse.",
        "This {product} has a {count} star rating from over {number} reviews.",
    ),
    "assistant": (
        "Set a timer for {duration}.",
        "Turn off {device}.",
        "[Please ]turn on {device} in the kitchen.",
        "Remind me to call {first} at {time} tomorrow.",
        "What's the weather like in {city} this weekend?",
        "It's {temperature} and sunny in {city} right now.",
        "Add {foods} to my shopping list.",
        "How long would it take to drive from {city} to {city}?",
        "Play some jazz in the living room.",
        "Wake me up at {time} on {weekday}.",
        "What's {number} times {number}?",
        "Convert {weight} to metric, please.",
        "How far is {distance} in kilometers?",
        "Send a text to {first}: I'm running {duration} late.",
        "Your next meeting is at {time} with {person}.",
        "Call {titled} on his cell phone.",
        "How do you spell {adjective}?",
        "What is the capital of {country}?",
        "Set the thermostat to {temperature}.",
        "Read me the news about {topic}.",
        "Navigate to {address}.",
        "Tell me something about {roman_title}.",
        "You have {count} new messages and {count} missed calls.",
        "Your flight to {city} departs at {time} from gate {ref}.",
        'Translate "good morning" into French.',
        "What does {acronym} stand for?",
    ),
    "everyday": (
        "I'm thinking about going to {place} on {weekday}.",
        "My {animal} chewed up my {color} {product} again.",
        "We should {activity} this weekend if the weather is nice.",
        "{first} and {first} are moving to {city} in {month}.",
        "The {adjective} {animal} ran across {place} and disappeared.",
        "Did you hear that {person} got a job as a {job} in {city}?",
        "I was born on {date} in {city}, {state}.",
        "My grandmother grew up in {country} in the {decade}.",
        "Do you want {food} or {food} for dinner tonight?",
        "For dinner we had {foods}.",
        "It costs about {price} to fix a {product} these days.",
        "The recipe calls for {fraction} cup of sugar and {count} eggs.",
        "We walked {distance} along the river before lunch.",
        "The store is open from {time} to {time}, {weekday} through {weekday}.",
        "Our flight leaves on {date} at {time}.",
        "My new address is {address}.",
        "Call me at {phone} when you get a chance.",
        "The meeting moved from {time} to {time}.",
        "Why does the {animal} always sit by the window?",
        "Where did you put the keys to the {color} car?",
        "Can you pick up {foods} on your way home?",
        "Don't forget to {activity} before {weekday}.",
        "I can't believe it's already {month}.",
        "The {job} said the repair would take {range} days.",
        "We're expecting {range} guests at the party.",
        "That movie about {roman_title} was better than I expected.",
        "The {adjective} {job} from {city} told a very {adjective} story.",
        "Honestly, {food} is the best thing on the menu.",
        "The temperature dropped to {temperature} last night.",
        "He ran the marathon in {time} and finished {ordinal}.",
        "The {acronym} report was released on {date}.",
        "Interest rates rose {percent} in {year}.",
        "Between {year} and {year}, the population of {city} doubled.",
        "Please send the files to {email} by {time}.",
        "The documentation is at {url}.",
        "Our team scored {number} points, but we still lost.",
        "The file is about {data_size}, so it may take a while to download.",
        "Mix {fraction} of the flour with the butter, then add the rest.",
        "The {day_ordinal} of {month} is a {weekday} this year.",
        "Tickets cost {price} for adults and {price} for children.",
        "The speed limit on this road is {speed}.",
        "The new panels produce about {energy} on a sunny day.",
        "Add {volume} of water and stir until smooth.",
        "The suitcase can't weigh more than {weight}.",
        "The account was overdrawn by {price}, so the balance is now -{number}.",
        "The stock closed at {number}, down {percent} from last week.",
        "About {number} people live in {city}.",
        "Pi is roughly 3.14159, and e is about 2.718.",
        "The lake is {distance} wide and freezes at {temperature}.",
    ),
    "questions": (
        "What time does {place} open on {weekday}?",
        "Have you ever been to {city}?",
        "How much does the {product} cost?",
        "Is it true that {first} is allergic to {food}?",
        "Who is the new {job} at {company}?",
        "Could you tell me how to get to {place}?",
        "Why is the {product} so expensive?",
        "When is your appointment with {titled}?",
        "Which one do you prefer, the {color} one or the {color} one?",
        "Where can I find a good {job} in {city}?",
        "Would you rather {activity} or {activity}?",
        "Do you know if {place} is open on {date}?",
        "How many {animal+s} did you see at the zoo?",
        "Is {number} a prime number?",
        "What did you think of the {adjective} ending?",
        "Are we still on for {weekday} at {time}?",
    ),
    "replies": (
        "[Yes|Yeah|Yep|Sure|Okay|OK|Alright|Right|No|Nope|Great|Perfect|Oh], [please|thanks|thank you|{first}|"
        "that's right|go ahead|I think so|not yet|sounds good|of course|that works|no problem|got it|why not]"
        "[.|!|.]",
        "[Yes|No|Sure|Okay], [it's|that's] {phone}.",
        "It's {first} {last}.",
        "[About|Around|Maybe|Exactly] {count}[.| minutes.| hours.| days.| people.]",
        "[At|Around|By|Before|After] {time}.",
        "[On|This|Next|Last] {weekday}[.|?| morning.| afternoon.| evening.]",
        "In {city}[.|?]",
        "[It's|That's] {price}[.|?]",
        "[Just|Only] the {product}[.|, please.]",
        "[My|The] {body_part}[.|, mostly.]",
        "{ref}[.|, I think.]",
        "[Sorry|Pardon|Excuse me], [what|who|where|when] [was that|did you say]?",
        "[Hmm|Uh|Um], [let me see|I'm not sure|hang on|give me a second].",
        "[Thanks|Thank you], {first}[.|!]",
    ),
    "commands": (
        "Please close the door behind you.",
        "Put the {product} back on the shelf.",
        "Turn left at {street_address}, then go straight for {distance}.",
        "Don't touch the {adjective} {animal}!",
        "Bring me the {color} folder from my desk.",
        "Write your name and phone number at the top of the form.",
        "Sign here, and initial on page {small_number}.",
        "Preheat the oven to {temperature} and bake for {duration}.",
        "Wait here until {first} comes back.",
        "Click the blue button at the bottom of the page.",
        "Fill in the form and send it to {email}.",
    ),
}

# Lone answers: one value and nothing around it, as a caller answers a question ("Tuesday.", "Boston.", "42.").
# Whole sentences give a word its neighbours; a recogniser trained only on them reads a lone word worst
# (docs/benchmarks.md, STT, session 41), and in a voice agent's dialogue these are the commonest turns.
ANSWERS: tuple[str, ...] = (
    "{first}.", "{person}.", "{city}.", "{state}.", "{country}.", "{company}.", "{product}.", "{medication}.",
    "{symptom}.", "{body_part}.", "{food}.", "{animal}.", "{job}.", "{color}.", "{place}.", "{activity}.",
    "{item}.", "{creature}.", "{weekday}.", "{month}.", "{month} {day_ordinal}.", "{weekday} the {day_ordinal}.",
    "{date}.", "{time}.", "{year}.", "{price}.", "{phone}.", "{ref}.", "{zip}.", "{last4}.", "{ordinal}.",
    "{day_ordinal}.", "{small_number}.", "{number}.", "{count}.", "{percent}.", "{duration}.", "{temperature}.",
    "{distance}.", "{weight}.", "{dose}.",
)  # fmt: skip

SHORT_REPLIES: tuple[str, ...] = (
    "Yes.", "No.", "Yeah.", "Nope.", "Sure.", "Okay.", "OK, thanks.", "Sure, go ahead.", "Of course.",
    "Absolutely.", "Not really.", "I think so.", "I don't think so.", "Maybe later.", "Thank you!",
    "Thanks so much.", "No problem.", "You're welcome.", "Got it.", "That's right.", "Exactly.",
    "Hold on.", "One second, please.", "Just a moment.", "Hello?", "Hi there!", "Good morning.",
    "Good evening.", "Goodbye.", "See you later.", "Bye now.", "Sounds good.", "Perfect.", "Great!",
    "Wow.", "Really?", "Seriously?", "Are you sure?", "What?", "Sorry, what was that?",
    "Could you repeat that?", "I'm not sure.", "Let me check.", "Hmm, let me think.", "Never mind.",
    "That works for me.", "Not yet.", "Almost done.", "All set.", "Oh no!", "Oops.", "Uh-huh.",
    "Mm-hmm.", "Right.", "Fair enough.", "Deal.", "Definitely not.", "Why not?", "How come?",
    "Go on.", "Please continue.", "That's it.", "Is that all?", "I'm ready.", "Me too.", "Same here.",
)  # fmt: skip

FILLERS: tuple[str, ...] = (
    "Um, ", "Uh, ", "So, ", "Well, ", "Okay, so ", "Hmm, ", "You know, ", "I mean, ", "Actually, ",
    "Let's see, ", "Oh, ", "Right, so ", "Um, so I think ", "Uh, I guess ", "Basically, ", "Alright, ",
)  # fmt: skip

CONNECTIVES: tuple[str, ...] = (
    ", and ", ", but ", ", so ", " because ", ", although ", "; however, ", ", and then ", " while ",
    ", which means ", "; meanwhile, ", ", or ", " until ",
)  # fmt: skip

_FIELD = re.compile(r"\{(\w+)(\+s)?\}|\[([^\[\]]*)\]")
_IRREGULAR_PLURALS = {
    "mouse": "mice", "goose": "geese", "sheep": "sheep", "deer": "deer", "moose": "moose",
    "elk": "elk", "wolf": "wolves", "knife": "knives", "boots of speed": "boots of speed",
    "dwarf": "dwarves", "fish": "fish", "shrimp": "shrimp", "cloak of shadows": "cloaks of shadows",
}  # fmt: skip


def plural(noun: str) -> str:
    """English plural of a vocabulary noun (regular rules plus the irregular nouns we use)."""
    if noun in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[noun]
    head, of, tail = noun.partition(" of ")
    if of:
        return plural(head) + of + tail
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def fill(template: str, rng: random.Random) -> str:
    """Fill every `{slot}` (`{slot+s}` in the plural) and choose one alternative of every `[a|b]`."""

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            value = SLOTS[match.group(1)](rng)
            return plural(value) if match.group(2) else value
        return rng.choice(match.group(3).split("|"))

    return _FIELD.sub(replace, template)
