"""The tools that send data off the machine, and only they, carry the ``send`` effect (the
egress effect a recipe run confirms)."""

from __future__ import annotations

from contract.catalogue import Effect, load_catalogue

EGRESS = {
    "report_friction",
    "send_email",
    "save_cloud_skill",
    "recall_cloud_skill",
    "execute_cloud_skill",
}


def test_every_tool_that_sends_data_off_the_machine_has_the_send_effect() -> None:
    sending = {tool.name for tool in load_catalogue() if tool.effect is Effect.send}
    assert sending == EGRESS
