"""English text normalisation for speech: written forms to the words a speaker says.

`normalize` runs a fixed series of rewrites, most specific first (emails before abbreviations,
phone numbers before ranges, money before plain numbers), each turning digits and symbols into
words. Output of one rewrite is never input that another one changes, which makes the whole
idempotent: normalize(normalize(x)) == normalize(x). Text that is already spoken passes through.

Reading choices (what a careful human reader says):
- phone, account, order and confirmation numbers, zip codes and card digits are read digit by
  digit, "zero" for 0 (see numbers.py for "oh" in years and times), groups separated by commas
  so the voice pauses where the written groups break;
- a four-digit number is a year when a year cue precedes it ("in", "since", a month ...) or it is
  a decade ("1980s"); otherwise it is a cardinal;
- "3/5" is a date after a date cue ("on 3/5", "due 3/5") and with a year ("5/3/2024", US order),
  else a fraction;
- acronyms said as words (NASA, PIN) become words ("Nasa", "pin"); spelled ones (FBI, ATM) stay in
  capitals, which espeak-ng and readers spell; dotted ones ("U.S.", "a.m.") lose their dots;
- Roman numerals are read only where they cannot be a word: after regnal names and titles
  ("King Henry VIII" -> "King Henry the eighth"), "World War II", "Super Bowl LVIII", "Chapter IV".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sonare.text.numbers import cardinal, decimal, digits, fraction, ordinal, plural_word, year


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_MONTH_ABBREVIATIONS = {m[:3]: m for m in MONTHS} | {"Sept": "September"}

# Always expanded; the period is the abbreviation's, not a sentence end (unless the text ends).
_ABBREVIATIONS = {
    "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Miz", "Prof.": "Professor", "Jr.": "Junior",
    "Sr.": "Senior", "etc.": "et cetera", "vs.": "versus", "e.g.": "for example", "i.e.": "that is",
    "Ave.": "Avenue", "Rd.": "Road", "Blvd.": "Boulevard", "Ln.": "Lane", "Ct.": "Court",
    "Pl.": "Place", "Pkwy.": "Parkway", "Hwy.": "Highway", "Apt.": "Apartment", "Mt.": "Mount",
    "Ft.": "Fort", "approx.": "approximately", "Dept.": "Department", "Inc.": "Incorporated",
    "Ltd.": "Limited", "Corp.": "Corporation", "Gov.": "Governor", "Sen.": "Senator",
    "Rep.": "Representative", "Gen.": "General", "Capt.": "Captain", "Lt.": "Lieutenant",
    "Sgt.": "Sergeant", "Col.": "Colonel", "Rev.": "Reverend", "Hon.": "Honorable",
    "Univ.": "University", "Assn.": "Association", "Bros.": "Brothers", "min.": "minutes",
    "max.": "maximum", "est.": "established", "ext.": "extension", "Ext.": "extension", "Ph.D.": "PhD",
    "Ste.": "Suite", "Ep.": "Episode", "Fig.": "Figure", "Vol.": "Volume", "Ch.": "Chapter",
} | {f"{short}.": full for short, full in _MONTH_ABBREVIATIONS.items()}  # fmt: skip
# Abbreviations that can end a sentence; the others ("Mr.", "vs.", "Apt.") never carry its period.
_SENTENCE_ENDINGS = frozenset(
    ["etc.", "Inc.", "Ltd.", "Corp.", "Jr.", "Sr.", "Bros.", "est.", "approx.", "min.", "max.", "Ave.", "Rd.",
     "Blvd.", "Ln.", "Ct.", "Pl.", "Pkwy.", "Hwy.", "Dept.", "Univ.", "Assn.", "Ph.D."]
)  # fmt: skip

_SAID_AS_WORDS = {
    "NASA": "Nasa", "NATO": "Nato", "UNESCO": "Unesco", "UNICEF": "Unicef", "FEMA": "Fema",
    "OSHA": "Osha", "FIFA": "Fifa", "UEFA": "Uefa", "NAFTA": "Nafta", "OPEC": "Opec", "IKEA": "Ikea",
    "NASDAQ": "Nasdaq", "COVID": "Covid", "AIDS": "aids", "SCUBA": "scuba", "LASER": "laser",
    "RADAR": "radar", "SONAR": "sonar", "PIN": "pin", "GIF": "gif", "SIM": "sim", "ZIP": "zip",
    "SWAT": "swat", "CAPTCHA": "captcha", "JPEG": "jay peg", "OK": "okay", "POTUS": "potus",
    "WASP": "wasp", "NIMBY": "nimby", "YOLO": "yolo", "MENSA": "Mensa", "DARPA": "Darpa",
}  # fmt: skip

_UNITS = {  # unit: (singular, plural)
    "km": ("kilometer", "kilometers"), "m": ("meter", "meters"), "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"), "mi": ("mile", "miles"), "ft": ("foot", "feet"),
    "yd": ("yard", "yards"), "kg": ("kilogram", "kilograms"), "g": ("gram", "grams"),
    "mg": ("milligram", "milligrams"), "mcg": ("microgram", "micrograms"), "µg": ("microgram", "micrograms"),
    "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"), "oz": ("ounce", "ounces"),
    "fl oz": ("fluid ounce", "fluid ounces"), "L": ("liter", "liters"), "l": ("liter", "liters"),
    "ml": ("milliliter", "milliliters"), "mL": ("milliliter", "milliliters"), "gal": ("gallon", "gallons"),
    "mph": ("mile per hour", "miles per hour"), "km/h": ("kilometer per hour", "kilometers per hour"),
    "kph": ("kilometer per hour", "kilometers per hour"), "KB": ("kilobyte", "kilobytes"),
    "kB": ("kilobyte", "kilobytes"), "MB": ("megabyte", "megabytes"), "GB": ("gigabyte", "gigabytes"),
    "TB": ("terabyte", "terabytes"), "Mbps": ("megabit per second", "megabits per second"),
    "Gbps": ("gigabit per second", "gigabits per second"), "Hz": ("hertz", "hertz"),
    "kHz": ("kilohertz", "kilohertz"), "MHz": ("megahertz", "megahertz"), "GHz": ("gigahertz", "gigahertz"),
    "W": ("watt", "watts"), "kW": ("kilowatt", "kilowatts"), "kWh": ("kilowatt hour", "kilowatt hours"),
    "V": ("volt", "volts"), "mAh": ("milliamp hour", "milliamp hours"), "hr": ("hour", "hours"),
    "hrs": ("hour", "hours"), "min": ("minute", "minutes"), "h": ("hour", "hours"), "sec": ("second", "seconds"),
    "ms": ("millisecond", "milliseconds"), "sq ft": ("square foot", "square feet"),
    "kcal": ("kilocalorie", "kilocalories"), "cal": ("calorie", "calories"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"), "°C": ("degree Celsius", "degrees Celsius"),
    "°": ("degree", "degrees"),
}  # fmt: skip
_CURRENCIES = {  # symbol: (unit singular, plural, hundredth singular, plural)
    "$": ("dollar", "dollars", "cent", "cents"),
    "€": ("euro", "euros", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "¥": ("yen", "yen", "", ""),
}
_FRACTION_DENOMINATORS = frozenset({2, 3, 4, 5, 6, 8, 10, 12, 16, 32, 64, 100})
_MULTIPLIERS = {"K": "thousand", "k": "thousand", "M": "million", "m": "million", "B": "billion", "bn": "billion",
                "thousand": "thousand", "million": "million", "billion": "billion", "trillion": "trillion"}  # fmt: skip

_REGNAL_NAMES = _word_set(
    """
    Henry Louis George Edward Charles Richard William James Elizabeth Mary John Pius Leo Benedict
    Gregory Innocent Clement Paul Ramses Peter Catherine Frederick Philip Alexander Nicholas Ivan
    Napoleon Otto Ludwig Ferdinand Gustav Olaf Harald Haakon Christian Wilhelm Francis Constantine
    Victor Umberto Alfonso Felipe Juan Carlos Rama Amenhotep Thutmose Ptolemy Cleopatra Innocent
    """
)
_REGNAL_TITLES = _word_set("King Queen Pope Emperor Empress Prince Princess Tsar Czar Pharaoh Sultan Duke")
_NUMBERED_THINGS = ("World War", "Super Bowl", "Chapter", "Part", "Volume", "Act", "Book", "Phase", "Episode",
                    "Title", "Article", "Apollo", "Vatican", "Star Wars Episode", "Rocky", "Final Fantasy")  # fmt: skip

_YEAR_CUES = _word_set(
    """
    in since from until till by of during circa around before after between through to year and or early late
    mid class spring summer fall autumn winter
    """
) | {m.lower() for m in MONTHS}
_NUMBERED_PLACES = _word_set("Apartment Apt Suite Unit Room Gate Flat Building Row Seat Section Platform Terminal")
_DATE_CUES = _word_set("on by due until till from since before after effective starting through dated")
# Words after which a number is an identifier, read digit by digit ("order number is 4821").
_ID_CUES = re.compile(
    r"\b(?:account|acct|order|confirmation|ticket|reference|ref|tracking|serial|policy|member|invoice"
    r"|case|claim|booking|reservation|transaction|customer|routing|card|pin|zip|code|id|extension|ext"
    r"|ending in|ends in|starts with|begins with|last four digits|number|no)"
    r"(?:\s+(?:number|no|code|id))?\.?(?:\s+(?:is|was|are|of))?\s*[:#,]?\s*$",
    re.IGNORECASE,
)
_STREET_TYPES = (r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Drive|Dr\.?|Lane|Ln\.?|Boulevard|Blvd\.?|Court"
                 r"|Ct\.?|Place|Pl\.?|Way|Terrace|Circle|Parkway|Pkwy\.?|Highway|Hwy\.?)")  # fmt: skip
_SPELLED_TLDS = _word_set(
    """
    edu io ai uk us ca de fr tv gov co
    """
)

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"

Rewrite = Callable[[re.Match[str]], str]


def _before(match: re.Match[str], words: int = 1) -> str:
    """The last `words` words before the match, as written."""
    return " ".join(match.string[: match.start()].split()[-words:])


def _number(text: str) -> str:
    """Words for a written number with optional thousands separators and decimals."""
    text = text.replace(",", "")
    if "." in text:
        return decimal(text)
    return cardinal(int(text))


def _counted(text: str, singular: str, plural: str) -> str:
    """ "1" -> "one meter", "2.5" -> "two point five meters"."""
    return f"{_number(text)} {singular if text == '1' else plural}"


# --- emails and web addresses -------------------------------------------------------------------


def _read_address_part(part: str) -> str:
    words = []
    for piece in re.split(r"([._\-+/=?&:])", part):
        if not piece:
            continue
        symbol = {".": "dot", "_": "underscore", "-": "dash", "+": "plus", "/": "slash",
                  "=": "equals", "?": "question mark", "&": "and", ":": "colon"}.get(piece)  # fmt: skip
        if symbol:
            words.append(symbol)
        elif piece.isdigit():
            words.append(digits(piece))
        elif piece.lower() in _SPELLED_TLDS and words and words[-1] == "dot":
            words.append(" ".join(piece.upper()))
        else:
            words.append(re.sub(r"\d+", lambda m: f" {digits(m.group())} ", piece).strip())
    return " ".join(words)


def _email(match: re.Match[str]) -> str:
    user, domain = match.group().split("@")
    return f"{_read_address_part(user)} at {_read_address_part(domain)}"


def _url(match: re.Match[str]) -> str:
    address = re.sub(r"^https?://", "", match.group())
    www = address.lower().startswith("www.")
    if www:
        address = address[4:]
    return ("W W W dot " if www else "") + _read_address_part(address.rstrip("/"))


# --- abbreviations and acronyms -----------------------------------------------------------------


def _period_kept(match: re.Match[str]) -> str:
    """The abbreviation's period also ends a sentence when the text ends or a capital follows."""
    rest = match.string[match.end() :]
    return "." if not rest.strip() or re.match(r"\s+[A-Z]", rest) else ""


def _final_period(match: re.Match[str]) -> str:
    """The period of an abbreviation that may end a sentence ("etc.", "Inc.", "a.m."), when it does."""
    return _period_kept(match) if match.group().endswith(".") else ""


def _abbreviation(match: re.Match[str]) -> str:
    word = match.group()
    if word in ("St.", "Dr."):
        # After a street name ("Maple St.", "5th St.") it is the street type, before a name a title
        # ("St. Louis", "Dr. Smith"); a house number before the street name settles it as a street.
        text_before = match.string[: match.start()]
        follows_name = bool(re.search(r"(?:\b[A-Z][a-z]+|\d(?:st|nd|rd|th))\s+$", text_before))
        before_name = bool(re.match(r"\s+[A-Z][a-z]", match.string[match.end() :]))
        address = bool(re.search(r"\d+\s+(?:[A-Z][a-z]+\s+){1,3}$", text_before))
        if follows_name and (address or not before_name):
            return {"St.": "Street", "Dr.": "Drive"}[word] + _period_kept(match)
        return {"St.": "Saint", "Dr.": "Doctor"}[word]
    expansion = _ABBREVIATIONS[word]
    return expansion + _final_period(match) if word in _SENTENCE_ENDINGS else expansion


def _dotted_acronym(match: re.Match[str]) -> str:
    letters = match.group().replace(".", "").upper()
    return letters + _final_period(match)


def _acronym(match: re.Match[str]) -> str:
    return _SAID_AS_WORDS[match.group()]


# --- phone and reference numbers ----------------------------------------------------------------


def _phone_group(group: str) -> str:
    return "eight hundred" if group == "800" else digits(group)


def _phone(match: re.Match[str]) -> str:
    groups = re.findall(r"\d+", match.group())
    words = [_phone_group(g) if i == len(groups) - 3 else digits(g) for i, g in enumerate(groups)]
    prefix = "plus " if match.group().lstrip().startswith("+") else ""
    return prefix + ", ".join(words)


def _spell_id(token: str) -> str:
    """A reference like "ZX-4471" or "A1234567": letters spelled in capitals, digits one by one."""
    parts = []
    for piece in re.findall(r"[A-Za-z]+|\d+", token):
        if piece.isdigit():
            parts.append(digits(piece))
        else:
            parts.append(piece.upper())
    return " ".join(parts)


def _reference(match: re.Match[str]) -> str:
    token = match.group("ref")
    has_letters = any(c.isalpha() for c in token)
    digit_count = sum(c.isdigit() for c in token)
    hashed = match.group("hash") is not None
    cued = hashed or bool(_ID_CUES.search(match.string[: match.start()]))
    spelled = (
        (has_letters and digit_count >= 3) or (cued and digit_count >= 4) or (digit_count >= 9 and "-" not in token)
    )
    if spelled:
        return ("number " if hashed else "") + _spell_id(token)
    return ("number " if hashed else "") + token  # "#1" -> "number 1", read as a cardinal later


# --- dates and times ----------------------------------------------------------------------------


def _month_day_year(month: int, day: int, year_text: str | None) -> str:
    words = f"{MONTHS[month - 1]} {ordinal(day)}"
    if year_text:
        y = int(year_text)
        if len(year_text) == 2:
            y += 2000 if y < 50 else 1900
        words += f", {year(y)}"
    return words


def _iso_date(match: re.Match[str]) -> str:
    y, m, d = (int(g) for g in match.groups())
    if not (1 <= m <= 12 and 1 <= d <= 31):
        return match.group()
    return _month_day_year(m, d, str(y))


def _slash_date(match: re.Match[str]) -> str:
    m, d, y = match.group("m"), match.group("d"), match.group("y")
    cued = _before(match).lower() in _DATE_CUES
    if not (1 <= int(m) <= 12 and 1 <= int(d) <= 31) or (y is None and not cued):
        return match.group()
    return _month_day_year(int(m), int(d), y)


def _month_name_date(match: re.Match[str]) -> str:
    month = _MONTH_ABBREVIATIONS.get(match.group("month")[:3].title(), match.group("month"))
    day = int(match.group("day"))
    if not 1 <= day <= 31:
        return match.group()
    words = f"{month} {ordinal(day)}"
    if match.group("year"):
        words += f", {year(int(match.group('year')))}"
    return words


def _day_month_date(match: re.Match[str]) -> str:
    words = f"the {ordinal(int(match.group('day')))} of {match.group('month')}"
    if match.group("year"):
        words += f", {year(int(match.group('year')))}"
    return words


def _clock(hour: int, minute: int, meridiem: str | None) -> str:
    words = "zero" if hour == 0 else cardinal(hour)
    if minute:
        words += f" oh {cardinal(minute)}" if minute < 10 else f" {cardinal(minute)}"
    elif meridiem is None:
        words += " o'clock" if hour <= 12 else " hundred"
    if meridiem:
        words += " " + ("AM" if meridiem.lower().startswith("a") else "PM")
    return words


def _time(match: re.Match[str]) -> str:
    hour, minute, second = int(match.group("h")), int(match.group("min") or 0), int(match.group("s") or 0)
    if hour > 24 or minute > 59 or second > 59:
        return match.group()
    seconds = f" and {cardinal(second)} second{'s' if second != 1 else ''}" if second else ""
    return _clock(hour, minute, match.group("ampm")) + seconds + _final_period(match)


# --- money, percentages, units ------------------------------------------------------------------


def _money(match: re.Match[str]) -> str:
    unit, units, cent, cents = _CURRENCIES[match.group("cur")]
    amount = match.group("amount").replace(",", "")
    multiplier = match.group("mult")
    sign = "minus " if match.group("neg") else ""
    if multiplier:
        return f"{sign}{_number(amount)} {_MULTIPLIERS[multiplier]} {units}"
    whole, _, hundredths = amount.partition(".")
    whole_n = int(whole or 0)
    parts = []
    if whole_n or not hundredths or not cent:
        parts.append(f"{cardinal(whole_n)} {unit if whole_n == 1 else units}")
    if hundredths and cent:
        minor = int((hundredths + "0")[:2])
        if minor:
            parts.append(f"{cardinal(minor)} {cent if minor == 1 else cents}")
        elif not parts:
            parts.append(f"zero {units}")
    return sign + " and ".join(parts)


def _percent(match: re.Match[str]) -> str:
    sign = "minus " if match.group("neg") else ""
    return f"{sign}{_number(match.group('n'))} percent"


def _unit(match: re.Match[str]) -> str:
    unit = re.sub(r"\s+", " ", match.group("unit"))
    singular, plural = _UNITS[unit]
    sign = "minus " if match.group("neg") else ""
    return sign + _counted(match.group("n").replace(",", ""), singular, plural)


def _multiplied(match: re.Match[str]) -> str:
    if _before(match).rstrip(".") in _NUMBERED_PLACES:
        return match.group()  # "Apartment 9B" is a label, not nine billion
    return f"{_number(match.group('n'))} {_MULTIPLIERS[match.group('mult')]}"


# --- plain numbers ------------------------------------------------------------------------------


def _decade(match: re.Match[str]) -> str:
    n = int(match.group("n"))
    words = year(n) if n >= 1000 else cardinal(n)
    head, _, last = words.rpartition(" ")
    return (head + " " if head else "") + plural_word(last)


def _ordinal(match: re.Match[str]) -> str:
    return ordinal(int(match.group("n").replace(",", "")))


def _year_or_number(match: re.Match[str]) -> str:
    n = int(match.group())
    previous = _before(match).strip(",")
    if 1000 <= n <= 2099 and previous.lower() in _YEAR_CUES:
        return year(n)
    return cardinal(n)


def _fraction(match: re.Match[str]) -> str:
    numerator, denominator = int(match.group("num")), int(match.group("den"))
    if denominator not in _FRACTION_DENOMINATORS or numerator >= denominator * 4:
        # not a fraction people say: "24/7", "50/50", "9/11"
        whole = f"{cardinal(int(match.group('whole')))} " if match.group("whole") else ""
        return f"{whole}{cardinal(numerator)} {cardinal(denominator)}"
    words = fraction(numerator, denominator)
    if match.group("whole"):
        words = f"{cardinal(int(match.group('whole')))} and {'a ' if numerator == 1 else ''}" + (
            words.split(" ", 1)[1] if numerator == 1 else words
        )
    return words


def _house_number(n: int) -> str:
    """House numbers in pairs: 420 -> "four twenty", 1405 -> "fourteen oh five", 300 -> "three hundred"."""
    high, low = divmod(n, 100)
    if n % 1000 == 0:
        return cardinal(n)
    if low == 0:
        return f"{cardinal(high)} hundred"
    return f"{cardinal(high)} {'oh ' + cardinal(low) if low < 10 else cardinal(low)}"


def _roman_value(numeral: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, ch in enumerate(numeral):
        value = values[ch]
        total += -value if i + 1 < len(numeral) and values[numeral[i + 1]] > value else value
    return total


_ROMAN = r"(?=[IVXLCDM]+\b)M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"


def _regnal(match: re.Match[str]) -> str:
    numeral = match.group("roman")
    titled = match.group("title") is not None
    if numeral == "I" and not titled:
        return match.group()
    return f"{match.group('lead')}the {ordinal(_roman_value(numeral))}"


def _numbered(match: re.Match[str]) -> str:
    return f"{match.group('thing')} {cardinal(_roman_value(match.group('roman')))}"


# --- symbols ------------------------------------------------------------------------------------

_SYMBOL_WORDS = {"&": "and", "+": "plus", "=": "equals", "@": "at", "%": "percent", "×": "times",
                 "~": "about", "<": "less than", ">": "greater than", "°": "degrees", "$": "dollars",
                 "€": "euros", "£": "pounds", "*": "star"}  # fmt: skip


def _spoken_letters_and_digits(match: re.Match[str]) -> str:
    """ "MP3" -> "MP three", "3D" -> "three D": a number glued to letters is its own word."""
    return re.sub(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ", match.group())


_REWRITES: tuple[tuple[str, Rewrite | str, int], ...] = (
    # quotes and dashes that only differ typographically
    (r"[‘’ʼ]", "'", 0),
    (r"[“”]", '"', 0),
    (r"(?<=\d)\s*–\s*(?=\d)", "-", 0),
    # emails and web addresses, before anything reads their dots and digits
    (r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", _email, 0),
    (
        r"\b(?:https?://\S+|www\.\S+|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|edu|gov|io|co|us|uk|ai|app|dev|info|biz)"
        r"(?:/[\w./?=&%-]*)?)(?<![.,;:!?])(?![\w@])",
        _url,
        0,
    ),
    # abbreviations, then dotted acronyms ("U.S.", "a.m.") that are not in the table
    (
        r"(?<![\w.])(?:"
        + "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
        + r"|St\.|Dr\.)(?!\w)",
        _abbreviation,
        0,
    ),
    (r"(?<![\w.])(?:[A-Za-z]\.){2,}(?!\w)", _dotted_acronym, 0),
    (r"\bNo\.\s*(?=\d)", "number ", 0),
    (r"(?<![A-Za-z])(?:" + "|".join(_SAID_AS_WORDS) + r")(?![A-Za-z])", _acronym, 0),
    # phone numbers
    (r"(?<![\w+])(?:\+?1[\s.-])?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}\b", _phone, 0),
    (r"(?<![\w+])\+\d{1,3}(?:[\s.-]\d{2,4}){2,4}\b", _phone, 0),
    (r"(?<![\w.,/-])\d{3}-\d{4}\b", _phone, 0),
    # dates and times
    (r"\b(\d{4})-(\d{2})-(\d{2})\b", _iso_date, 0),
    (r"(?<![\w/.])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?(?![\w/])", _slash_date, 0),
    (
        r"\b(?P<month>"
        + "|".join(MONTHS)
        + r"|(?:"
        + "|".join(_MONTH_ABBREVIATIONS)
        + r")\.?)\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{4})\b)?",
        _month_name_date,
        0,
    ),
    (
        r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?P<month>" + "|".join(MONTHS) + r")\b(?:,?\s+(?P<year>\d{4})\b)?",
        _day_month_date,
        0,
    ),
    (r"\b(?P<h>\d{1,2}):(?P<min>\d{2})(?::(?P<s>\d{2}))?(?:\s*(?P<ampm>[AaPp]\.?[Mm]\.?|AM|PM)(?![\w]))?", _time, 0),
    (r"\b(?P<h>\d{1,2})(?P<min>)(?P<s>)\s*(?P<ampm>[AaPp]\.?[Mm]\.?)(?![\w])", _time, 0),
    # references read digit by digit, zip codes
    (r"(?P<hash>#\s?)?(?<![\w.,])(?P<ref>(?=[A-Z0-9-]*\d)[A-Z0-9]+(?:-[A-Z0-9]+)*)(?![\w.,]\d|[\w])", _reference, 0),
    (r"(?<=\b[A-Z]{2} )\d{5}(?:-\d{4})?\b", lambda m: digits(m.group()), 0),
    # heights (5'10"), three-digit service numbers (911), ratios (2:1)
    (
        r"\b(?P<ft>\d)'\s?(?P<inch>\d{1,2})(?:\"|''|\b)",
        lambda m: f"{cardinal(int(m['ft']))} foot {cardinal(int(m['inch']))}",
        0,
    ),
    (r"(?<![\w.,])[2-9]11\b(?![.,]\d)", lambda m: digits(m.group()), 0),
    (r"(?<=\d):(?=\d)", " to ", 0),
    # house numbers read in pairs, as people say them ("fourteen twenty Maple Street"); the digits after a
    # thousands separator or a decimal point belong to a larger number ("19,985 Riverside Parkway")
    (
        r"(?<![\d,.])\d{3,4}(?=\s+(?:[A-Z][a-z]+\s+){1,3}" + _STREET_TYPES + r"(?!\w))",
        lambda m: _house_number(int(m.group())),
        0,
    ),
    # ranges: the dash becomes "to"; the numbers on either side are read by the rules below
    (r"(?<=\d)\s?[-–]\s?(?=[$€£]?\d)", " to ", 0),
    # "$5/month", "5 GB/month"
    (
        r"(?<=[A-Za-z0-9])/(?=(?:month|year|week|day|night|hour|minute|person|head|unit|item|mile|gallon|page|mo|yr|hr)\b)",
        " per ",
        0,
    ),
    # money, percentages, measures
    (
        r"(?P<neg>-)?(?P<cur>[$€£¥])\s?(?P<amount>"
        + _NUMBER
        + r")(?:\s?(?P<mult>thousand|million|billion|trillion|bn|[KMBkm])\b)?",
        _money,
        0,
    ),
    (r"(?P<neg>(?<![\w])-)?(?P<n>" + _NUMBER + r")\s?%", _percent, 0),
    (
        r"(?P<neg>(?<![\w])-)?(?P<n>"
        + _NUMBER
        + r")\s?(?P<unit>°[FC]|°|(?:"
        + "|".join(re.escape(u) for u in sorted((u for u in _UNITS if not u.startswith("°")), key=len, reverse=True))
        + r")(?![\w/]))",
        _unit,
        0,
    ),
    # "1.2M users", "3B people"; not "Apt. 14B" or "14K gold"
    (r"(?P<n>\d+\.\d+|\d+(?=[KMB]\s+[a-z]))(?P<mult>[KMB]|bn)\b", _multiplied, 0),
    # decades, ordinals, fractions, years and plain numbers
    (r"'(?P<n>\d0)s\b", _decade, 0),
    (r"\b(?P<n>\d{1,3}0)'?s\b", _decade, 0),
    (r"\b(?P<n>\d{1,3}(?:,\d{3})*|\d+)(?:st|nd|rd|th)\b", _ordinal, 0),
    (r"(?<![\w/])(?:(?P<whole>\d+)\s)?(?P<num>\d+)/(?P<den>\d+)(?![\w/])", _fraction, 0),
    (r"(?<![\w.,])(?P<neg>-)(?=\d)", "minus ", 0),
    (r"\b\d{4}\b(?![.,]\d)", _year_or_number, 0),
    (r"\b\w*(?:[A-Za-z]\d|\d[A-Za-z])\w*\b", _spoken_letters_and_digits, 0),
    (_NUMBER, lambda m: _number(m.group()), 0),
    # Roman numerals, only where they cannot be words
    (
        r"\b(?P<lead>(?P<title>(?:"
        + "|".join(_REGNAL_TITLES)
        + r")\s+)?(?:[A-Z][a-z]+\s+)?)(?P<roman>"
        + _ROMAN
        + r")\b",
        lambda m: _regnal(m) if _regnal_context(m) else m.group(),
        0,
    ),
    (r"\b(?P<thing>" + "|".join(_NUMBERED_THINGS) + r")\s+(?P<roman>" + _ROMAN + r")\b", _numbered, 0),
    # symbols left over
    (r"#(?=[A-Za-z])", "hashtag ", 0),
    (r"#(?=\s*\w)", "number ", 0),
    (r"\band/or\b", "and or", 0),
    (r"(?<=[A-Za-z])/(?=[A-Za-z])", " slash ", 0),
    (r"\s*[&+=@%×~<>°$€£*]\s*", lambda m: f" {_SYMBOL_WORDS[m.group().strip()]} ", 0),
)


def _regnal_context(match: re.Match[str]) -> bool:
    """A Roman numeral after a regnal title, or after a name that monarchs and popes bear."""
    lead = match.group("lead").split()
    return match.group("title") is not None or (bool(lead) and lead[-1] in _REGNAL_NAMES)


_COMPILED = tuple((re.compile(p, flags), r) for p, r, flags in _REWRITES)


def normalize(text: str) -> str:
    """Written English -> the words a speaker says, keeping sentence punctuation."""
    for pattern, rewrite in _COMPILED:
        text = pattern.sub(rewrite, text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", text)
    return text.strip()
