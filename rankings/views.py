from typing import Any

from tabsite.api import ApiError, api_function, integer, is_group, shown
from tabsite.dbthread import in_database_thread

from .selectors import ranking_top


@api_function()
async def ranking(args: dict[str, Any]) -> dict[str, Any]:
    # The seed's messages for ranking are capitalised, unlike join's, and a size without games is an empty table.
    if args.get("group") is None:
        raise ApiError("Undefined group")
    group = integer(args["group"])
    if group is None or not is_group(group):
        raise ApiError(f"Invalid group '{shown(args['group'])}'")
    size = integer(args.get("size"))
    if size is None or not 1 <= size <= 1000:
        raise ApiError(f"Invalid size '{shown(args.get('size', 'undefined'))}'")
    return {"ranking": await in_database_thread(ranking_top)(group=group, size=size)}
