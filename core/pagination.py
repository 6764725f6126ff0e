"""A page of a list in one query: the total number of rows comes with the page's rows, as a window count."""

from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet, Window

MAX_PAGE = 1_000_000


def page_of(rows: QuerySet, number: str | None, per_page: int) -> Page:
    """Return page `number` of a queryset (of models or of values()): the first when `number` is not a page
    number, the last when it is past the end (then with two more queries, as Django's Paginator.get_page does)."""
    paginator = Paginator(rows, per_page)
    try:
        wanted = max(1, int(number or 1))
    except ValueError:
        wanted = 1
    # Past any real page, and short of an offset the databases refuse (an integer overflow is a server error).
    wanted = min(wanted, MAX_PAGE)
    start = (wanted - 1) * per_page
    found = list(rows.annotate(total_rows=Window(Count("*")))[start : start + per_page])
    if not found and wanted > 1:
        return paginator.get_page(paginator.num_pages)
    # Paginator.count is a cached property: the window count stands in for its own COUNT query.
    if not found:
        paginator.count = 0
    else:
        paginator.count = found[0]["total_rows"] if isinstance(found[0], dict) else found[0].total_rows
    return Page(found, wanted, paginator)
