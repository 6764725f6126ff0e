from django.urls import path

from . import views

urlpatterns = [
    path("rooms/", views.room_create, name="draughts-rooms"),
    path("rooms/<uuid:room_id>/", views.room_state, name="draughts-room"),
    path("rooms/<uuid:room_id>/join", views.room_join, name="draughts-join"),
    path("rooms/<uuid:room_id>/stream", views.room_stream, name="draughts-stream"),
    path("rooms/<uuid:room_id>/<slug:action>", views.room_act, name="draughts-act"),
]
