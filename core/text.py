def is_text(value: str) -> bool:
    """Return whether a string can be stored and sent: JSON may carry lone surrogates (which UTF-8 cannot encode)
    and NUL characters (which PostgreSQL cannot store)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


def is_short_text(value: object, max_length: int) -> bool:
    """Return whether a value is a string of 1 to `max_length` characters that can be stored and sent."""
    return isinstance(value, str) and 0 < len(value) <= max_length and is_text(value)
