"""The closed vocabularies of a friction signal.

The first three are the `report_friction` spec's enums, verbatim. The others are LMCP's own
classifications; every member is documented in ``docs/signal-schema.md``.
"""

from __future__ import annotations

from enum import StrEnum


class FrictionType(StrEnum):
    """What kind of friction the agent observed (spec, verbatim)."""

    repeated_failure = "repeated_failure"
    task_abandoned = "task_abandoned"
    workaround_needed = "workaround_needed"
    cannot_complete = "cannot_complete"
    other = "other"


class ErrorCategory(StrEnum):
    """Category of what went wrong, as the agent chose it (spec, verbatim)."""

    permission = "permission"
    timeout = "timeout"
    empty = "empty"
    not_found = "not_found"
    parse = "parse"
    wrong_result = "wrong_result"
    missing_capability = "missing_capability"
    crash = "crash"
    other = "other"


class IntentCategory(StrEnum):
    """What the user was trying to do, chosen from a list (spec, verbatim)."""

    find_email = "find_email"
    read_email = "read_email"
    send_email = "send_email"
    send_message = "send_message"
    read_messages = "read_messages"
    schedule_event = "schedule_event"
    read_calendar = "read_calendar"
    manage_reminder = "manage_reminder"
    manage_note = "manage_note"
    manage_contact = "manage_contact"
    read_file = "read_file"
    write_file = "write_file"
    search_files = "search_files"
    document_work = "document_work"
    cloud_storage = "cloud_storage"
    browse_web = "browse_web"
    run_command = "run_command"
    other = "other"


class ErrorClass(StrEnum):
    """LMCP's own classification of a failed (or useless) tool call."""

    invalid_arguments = "invalid_arguments"  # the arguments broke the tool's input schema
    unknown_tool = "unknown_tool"  # the name is not in the catalogue
    not_found = "not_found"  # the named note, file, message, recipe or skill does not exist
    permission_denied = "permission_denied"  # the app or resource is not permitted
    app_not_installed = "app_not_installed"
    app_not_running = "app_not_running"
    conflict = "conflict"  # e.g. recipe_exists
    too_large = "too_large"  # a limit of the tool was exceeded
    timeout = "timeout"
    unavailable = "unavailable"  # a service the tool needs could not be reached
    empty_result = "empty_result"  # the call worked but returned nothing useful
    needs_confirmation = "needs_confirmation"  # only a preview came back where a result was needed
    step_failed = "step_failed"  # a recipe step failed (the step's own failure is in the ring)
    internal_error = "internal_error"  # a bug in LMCP: an unexpected exception
    no_failure = "no_failure"  # LMCP saw no failure of this tool; the agent reported friction


class Outcome(StrEnum):
    """How a tool call ended, as kept in the ring."""

    ok = "ok"
    empty = "empty"  # succeeded with nothing useful
    preview = "preview"  # returned a preview and changed nothing
    invalid = "invalid"  # refused: arguments broke the schema, or unknown tool
    failed = "failed"  # the tool ran and failed


class ArgType(StrEnum):
    """The JSON type of one argument."""

    string = "string"
    integer = "integer"
    number = "number"
    boolean = "boolean"
    null = "null"
    array = "array"
    object = "object"


class SizeBucket(StrEnum):
    """A coarse size: strings by UTF-8 bytes, arrays by items, objects by keys.

    Numbers, booleans and null have no size (the field is null).
    """

    zero = "0"
    up_to_16 = "1-16"
    up_to_256 = "17-256"
    up_to_4k = "257-4K"
    up_to_64k = "4K-64K"
    up_to_1m = "64K-1M"
    over_1m = "1M+"


class AttemptsBucket(StrEnum):
    """How many times the agent says it tried, bucketed at the client (signal v2).

    The agent's raw count never leaves the client: a free integer is a covert channel.
    """

    one = "1"
    two = "2"
    three_to_five = "3-5"
    six_to_ten = "6-10"
    more = "more"  # 11 or more


class Platform(StrEnum):
    """The client's operating system family."""

    macos = "macos"
    windows = "windows"
    linux = "linux"
