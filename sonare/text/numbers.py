"""English words for numbers: cardinals, ordinals, years, decimals, fractions, digit strings.

American style: no "and" inside numbers ("one hundred twenty-three"), hyphenated tens. Digit by
digit, 0 is "zero" (clear on a phone line and never confused with the letter O); inside years and
clock times a lone leading zero in the minutes or the last two digits is "oh" ("nineteen oh five",
"three oh five"), as people say them.
"""

from __future__ import annotations

ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)  # fmt: skip
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
SCALES = ((10**15, "quadrillion"), (10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))

_IRREGULAR_ORDINALS = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
    "nine": "ninth", "twelve": "twelfth",
}  # fmt: skip
_FRACTION_NAMES = {2: ("half", "halves"), 4: ("quarter", "quarters")}


def _below_thousand(n: int) -> list[str]:
    words = []
    if n >= 100:
        words += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(TENS[n // 10] + (f"-{ONES[n % 10]}" if n % 10 else ""))
    elif n or not words:
        words.append(ONES[n])
    return words


def cardinal(n: int) -> str:
    """123 -> "one hundred twenty-three"; negative numbers get "minus"."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n < 1000:
        return " ".join(_below_thousand(n))
    words: list[str] = []
    for value, name in SCALES:
        if n >= value:
            words += [cardinal(n // value), name]
            n %= value
    if n:
        words += _below_thousand(n)
    return " ".join(words)


def ordinal_word(word: str) -> str:
    """The ordinal of a cardinal's last word: "twenty-one" -> "twenty-first"."""
    head, hyphen, last = word.rpartition("-")
    if last in _IRREGULAR_ORDINALS:
        last = _IRREGULAR_ORDINALS[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + hyphen + last


def ordinal(n: int) -> str:
    """22 -> "twenty-second"."""
    words = cardinal(n).split(" ")
    words[-1] = ordinal_word(words[-1])
    return " ".join(words)


def plural_word(word: str) -> str:
    """Plural of a number's last word, for decades: "eighty" -> "eighties", "ten" -> "tens"."""
    head, hyphen, last = word.rpartition("-")
    return head + hyphen + (last[:-1] + "ies" if last.endswith("y") else last + "s")


def year(n: int) -> str:
    """1999 -> "nineteen ninety-nine", 2005 -> "two thousand five", 2024 -> "twenty twenty-four"."""
    if n < 1000 or n >= 10000 or 2000 <= n <= 2009 or n % 1000 == 0:
        return cardinal(n)
    high, low = divmod(n, 100)
    if low == 0:
        return f"{cardinal(high)} hundred"
    if low < 10:
        return f"{cardinal(high)} oh {ONES[low]}"
    return f"{cardinal(high)} {cardinal(low)}"


def digits(text: str) -> str:
    """Each digit as a word: "0147" -> "zero one four seven"."""
    return " ".join(ONES[int(d)] for d in text if d.isdigit())


def decimal(text: str) -> str:
    """A written decimal number: "3.14" -> "three point one four", "-0.5" -> "minus zero point five"."""
    sign = "minus " if text.startswith("-") else ""
    whole, _, fraction = text.lstrip("+-").replace(",", "").partition(".")
    words = cardinal(int(whole)) if whole else ""
    if fraction:
        words = f"{words} point {digits(fraction)}".strip()
    return sign + words


def fraction(numerator: int, denominator: int) -> str:
    """3/4 -> "three quarters", 1/2 -> "one half", 5/8 -> "five eighths"."""
    if denominator in _FRACTION_NAMES:
        singular, plural = _FRACTION_NAMES[denominator]
    else:
        singular = ordinal(denominator)
        plural = singular + "s"
    return f"{cardinal(numerator)} {singular if numerator == 1 else plural}"
