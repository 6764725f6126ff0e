from django.urls import path

from . import views

# What the Plakoto page calls besides the API, with the visitor's session (mounted at /tables/plakoto/).
urlpatterns = [
    # "_game" is no table's name (those have no underscore).
    path("_game/<str:public_id>", views.table_of_game, name="plakoto-table-of-game"),
    path("<str:name>/stream", views.table_stream, name="plakoto-stream"),
    path("<str:name>/computer", views.computer, name="plakoto-computer"),
    path("<str:name>/seat/<str:colour>", views.seat, name="plakoto-seat"),
]
