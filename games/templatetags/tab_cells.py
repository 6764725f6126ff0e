"""Template filters for Tâb's pages."""

from django import template

from games.rules.tab import cell_name

register = template.Library()


@register.filter
def tab_cell(cell: int, size: int) -> str:
    """`{{ cell|tab_cell:size }}`: "row 1, column 3" (games.rules.tab.cell_name)."""
    return cell_name(int(cell), int(size))
