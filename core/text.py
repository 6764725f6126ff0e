def is_text(value: str) -> bool:
    """Return whether a string can be stored and sent: JSON may carry lone surrogates (which UTF-8 cannot encode)
    and NUL characters (which PostgreSQL cannot store)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value
