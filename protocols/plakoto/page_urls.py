from django.urls import path

from . import views

# What the Plakoto page calls besides the API, with the visitor's session (mounted at /tables/plakoto/).
urlpatterns = [
    path("<str:name>/computer", views.computer, name="plakoto-computer"),
    path("<str:name>/seat/<str:colour>", views.seat, name="plakoto-seat"),
]
