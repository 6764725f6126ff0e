from django.apps import AppConfig


class PlakotoConfig(AppConfig):
    name = "protocols.plakoto"
    label = "plakoto"
    verbose_name = "Plakoto tables"
