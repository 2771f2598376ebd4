"""Ask a running collector instead of a file: ``GET /v1/triage/{question}`` with a team token."""

from __future__ import annotations

from typing import Any

import httpx

from analysis._filters import Filters
from analysis._questions import Answer, Question, answer_from_json
from analysis._rows import Row
from service.problems import problem_of

__all__ = ["RemoteError", "fetch_answer"]


class RemoteError(RuntimeError):
    """The collector refused or failed: the status, the problem's code and its detail (which
    names fields and rules, never a value)."""

    def __init__(self, status: int, code: str, detail: str | None = None) -> None:
        super().__init__(f"the collector answered {status} ({code})")
        self.status = status
        self.code = code
        self.detail = detail


def fetch_answer(
    base_url: str,
    token: str,
    question: Question,
    filters: Filters | None = None,
    *,
    limit: int | None = None,
    transport: httpx.BaseTransport | None = None,
    timeout: float = 30.0,
) -> Answer[Row]:
    """One question's answer from a collector: post-processing of its released cells."""
    params: dict[str, Any] = dict((filters or Filters()).as_strings())
    if limit is not None:
        params["limit"] = limit
    url = f"{base_url.rstrip('/')}/v1/triage/{question.value}"
    try:
        with httpx.Client(transport=transport, timeout=timeout) as client:
            response = client.get(url, params=params, headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        raise RemoteError(0, type(exc).__name__) from None
    if response.status_code != 200:
        raise RemoteError(response.status_code, *problem_of(response.content))
    return answer_from_json(response.json())
