"""The wired client: one ``Runtime`` per LMCP process (the MCP server, the CLI, a simulated client).

Everything is built from one :class:`~client.settings.ClientSettings` (the entry point's, read
once), so a test or a simulation can run many isolated clients in one process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from client.apps import AppProbe, FileAppProbe
from client.consent import ConsentGate
from client.delivery import BackgroundDelivery
from client.friction import FrictionReporter
from client.host import ToolHost
from client.outbox import Outbox
from client.paths import LmcpHome
from client.recipes import recipe_handlers
from client.sender import Sender
from client.sentlog import SentLog
from client.settings import ClientSettings
from client.skills import skill_handlers
from client.tools import builtin_handlers
from contract.schema import ClientInfo

__all__ = ["Runtime"]


@dataclass
class Runtime:
    settings: ClientSettings
    host: ToolHost
    consent: ConsentGate
    reporter: FrictionReporter
    sender: Sender
    outbox: Outbox
    sent_log: SentLog
    delivery: BackgroundDelivery | None = None

    @property
    def home(self) -> LmcpHome:
        return self.settings.home

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str],
        *,
        transport: httpx.BaseTransport | None = None,
        client_info: ClientInfo | None = None,
        app_probe: AppProbe | None = None,
    ) -> Runtime:
        """An isolated client configured by ``environ`` alone (tests, simulations)."""
        return cls.from_settings(
            ClientSettings.from_env(environ),
            transport=transport,
            client_info=client_info,
            app_probe=app_probe,
        )

    @classmethod
    def from_settings(
        cls,
        settings: ClientSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        client_info: ClientInfo | None = None,
        app_probe: AppProbe | None = None,
    ) -> Runtime:
        home = settings.home
        probe = app_probe or FileAppProbe(home.apps)
        host = ToolHost(app_probe=probe)
        consent = ConsentGate(home, settings.signals_restriction, account=settings.account_home)
        sender = Sender(
            settings.collector_url,
            transport=transport,
            allowed=consent.enabled,
            send_lock=home.send_lock,
        )
        outbox = Outbox(home)
        sent_log = SentLog(home)
        delivery = BackgroundDelivery(outbox, sender, sent_log, consent.enabled)
        reporter = FrictionReporter(
            home,
            host,
            consent,
            sender,
            outbox=outbox,
            sent_log=sent_log,
            client=client_info,
            delivery=delivery,
        )
        host.register("report_friction", reporter)
        host.add_failure_listener(reporter.remember_failure)
        _register_tools(host, settings, probe, transport)
        # Not woken here: building a runtime (``lmcp signals off`` does) never sends anything.
        # The first report wakes the thread, which drains what earlier runs left queued too.
        return cls(settings, host, consent, reporter, sender, outbox, sent_log, delivery)

    def close(self) -> None:
        # A delivery still inside a request keeps its client; it is dropped when that ends.
        if self.delivery is None or self.delivery.close():
            self.sender.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _register_tools(
    host: ToolHost,
    settings: ClientSettings,
    probe: AppProbe,
    transport: httpx.BaseTransport | None,
) -> None:
    host.register_all(builtin_handlers(settings.home, probe))
    host.register_all(recipe_handlers(settings.home, host))
    host.register_all(skill_handlers(settings, transport))
