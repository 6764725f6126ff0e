"""What a new nick may be, and when two nicks are the same.

A nick is letters of any script (with their combining accents and vowel signs), digits, '.', '_' and '-'. Two
nicks are the same nick when they differ only by case or by Unicode's compatibility forms (`Ana`/`ana`,
`ﬁona`/`fiona`, full-width `ａｎａ`, the Kelvin sign, composed or decomposed accents): their key, NFKC with case
folded, is equal. A nick that mixes scripts with letters that look alike (a Cyrillic `р` among Latin letters) is
refused, from Unicode's confusables table (the confusable-homoglyphs package).
"""

import unicodedata

from confusable_homoglyphs import confusables

NICK_MAX_LENGTH = 32
PUNCTUATION = "._-"
NICK_RULE_TEXT = (
    f"a nick is 1 to {NICK_MAX_LENGTH} letters, digits, '.', '_' or '-', without look-alike letters of another script"
)


def nick_key(nick: str) -> str:
    """Return what tells nicks apart: two nicks with the same key are the same nick."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", nick).casefold())


def _is_mark(character: str) -> bool:
    return unicodedata.category(character).startswith("M")


def nick_is_valid(nick: str) -> bool:
    """Return whether a new account may take this nick (whether another account has it is not asked here)."""
    if not 1 <= len(nick) <= NICK_MAX_LENGTH or _is_mark(nick[0]):
        return False
    if not all(character.isalnum() or character in PUNCTUATION or _is_mark(character) for character in nick):
        return False
    # Combining marks belong to the script of the letter they follow (Unicode's "Inherited"), digits and punctuation
    # to every script ("Common"): neither makes a nick mixed.
    mixed = confusables.is_mixed_script(nick, allowed_aliases=["COMMON", "INHERITED"])
    return not (mixed and confusables.is_confusable(nick))
