from django.urls import path, re_path

from . import views

# The REST API (mounted at /plakoto/ by the app): a table under each name.
urlpatterns = [
    path("<str:name>/<path:rest>", views.table, name="plakoto-table"),
    re_path(r"^(?P<rest>.*)$", views.not_found),
]
