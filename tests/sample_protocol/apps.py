import os
from pathlib import Path

from django.apps import AppConfig


class SampleProtocolConfig(AppConfig):
    name = "tests.sample_protocol"
    label = "sample_protocol"

    def ready(self) -> None:
        from core.lineservers import LineServer, register, self_signed_certificate

        from .server import handle

        certificate = key = None
        if os.environ.get("SAMPLE_TLS_DIR"):
            directory = Path(os.environ["SAMPLE_TLS_DIR"])
            certificate, key = directory / "sample.crt", directory / "sample.key"
            self_signed_certificate(certificate, key, ["127.0.0.1", "localhost"])
        port = int(os.environ["SAMPLE_LINE_PORT"])
        register(LineServer("sample", handle, "127.0.0.1", port, str(certificate or ""), str(key or ""), 1024))
