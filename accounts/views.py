from typing import Any

from tabsite.api import api_function, credentials
from tabsite.limits import per_address

from .services import user_register


@per_address("register", "TAB_REGISTER_PER_MINUTE")
@api_function()
async def register(args: dict[str, Any]) -> dict[str, Any]:
    nick, password = credentials(args)
    await user_register(nick=nick, password=password)
    return {}
