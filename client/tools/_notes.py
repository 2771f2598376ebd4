"""Notes: a local store addressed by title (``note_name``); ``note_id`` is local to this machine.

One JSON document per note, named by a hash of the normalised title (never the title itself),
so a title lookup is one file read and two notes cannot share a title. Writes take the store's
lock and replace files atomically.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from client._files import file_lock, write_new, write_replace
from client.errors import ToolFailure
from client.host import Handler, Reply
from client.tools._common import not_found, opt_int, opt_str
from contract.schema import ErrorClass, Outcome

__all__ = ["Note", "NotesStore", "notes_handlers"]


def title_key(title: str) -> str:
    """The identity of a title: NFC-normalised and case-folded (as Notes apps compare)."""
    return unicodedata.normalize("NFC", title).casefold()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class Note:
    note_id: str
    note_name: str
    folder: str | None
    body: str
    created: str
    modified: str

    def to_json(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id,
            "note_name": self.note_name,
            "folder": self.folder,
            "body": self.body,
            "created": self.created,
            "modified": self.modified,
        }

    def summary(self) -> dict[str, Any]:
        return {
            "note_name": self.note_name,
            "note_id": self.note_id,
            "folder": self.folder,
            "modified": self.modified,
            "size": len(self.body.encode("utf-8")),
        }

    @classmethod
    def from_json(cls, doc: Any) -> Note | None:
        if not isinstance(doc, dict):
            return None
        fields = ("note_id", "note_name", "body", "created", "modified")
        if not all(isinstance(doc.get(f), str) for f in fields):
            return None
        folder = doc.get("folder")
        return cls(
            note_id=doc["note_id"],
            note_name=doc["note_name"],
            folder=folder if isinstance(folder, str) else None,
            body=doc["body"],
            created=doc["created"],
            modified=doc["modified"],
        )


class NotesStore:
    """The notes under ``root`` (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, title: str) -> Path:
        digest = hashlib.sha256(title_key(title).encode("utf-8")).hexdigest()[:32]
        return self.root / f"{digest}.json"

    def _read(self, path: Path) -> Note | None:
        try:
            return Note.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def _write(self, path: Path, note: Note, *, new: bool) -> bool:
        data = json.dumps(note.to_json(), ensure_ascii=False).encode("utf-8")
        if new:
            return write_new(path, data)
        write_replace(path, data)
        return True

    def __iter__(self) -> Iterator[Note]:
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*.json")):
            if path.name.startswith("."):
                continue
            note = self._read(path)
            if note is not None:
                yield note

    def by_name(self, title: str) -> Note | None:
        note = self._read(self._path(title))
        if note is None or title_key(note.note_name) != title_key(title):
            return None
        return note

    def by_id(self, note_id: str) -> Note | None:
        return next((n for n in self if n.note_id == note_id), None)

    def find(self, args: Mapping[str, Any]) -> Note:
        """The note named by ``note_name`` (preferred) or ``note_id``; ``not_found`` if none."""
        name, note_id = opt_str(args, "note_name"), opt_str(args, "note_id")
        note = self.by_name(name) if name is not None else None
        if note is None and name is None and note_id is not None:
            note = self.by_id(note_id)
        if note is None:
            raise not_found("note")
        return note

    def name_of(self, note_id: str) -> str | None:
        """The title of the note with this local id (used when a recipe gives only an id)."""
        note = self.by_id(note_id)
        return note.note_name if note is not None else None

    def create(self, title: str, body: str, folder: str | None) -> Note:
        now = _now()
        note = Note(uuid.uuid4().hex, title, folder, body, now, now)
        with file_lock(self.root / ".lock"):
            if not self._write(self._path(title), note, new=True):
                raise ToolFailure(
                    ErrorClass.conflict, "a note with this title already exists", code="note_exists"
                )
        return note

    def append(self, args: Mapping[str, Any], text: str) -> Note:
        with file_lock(self.root / ".lock"):
            note = self.find(args)
            sep = "" if not note.body or note.body.endswith("\n") else "\n"
            updated = Note(
                note.note_id,
                note.note_name,
                note.folder,
                note.body + sep + text,
                note.created,
                _now(),
            )
            self._write(self._path(note.note_name), updated, new=False)
        return updated

    def delete(self, note: Note) -> None:
        with file_lock(self.root / ".lock"):
            path = self._path(note.note_name)
            current = self._read(path)
            if current is None or current.note_id != note.note_id:
                raise not_found("note")
            path.unlink()


def notes_handlers(store: NotesStore) -> dict[str, Handler]:
    """The five notes tools over ``store`` (without the app check)."""

    def list_notes(args: Mapping[str, Any]) -> Any:
        folder = opt_str(args, "folder")
        limit = opt_int(args, "limit", 50)
        notes = [n for n in store if folder is None or n.folder == folder]
        notes.sort(key=lambda n: (n.modified, n.created), reverse=True)
        shown = [n.summary() for n in notes[:limit]]
        result = {"notes": shown, "count": len(shown), "truncated": len(notes) > limit}
        return Reply(result, Outcome.empty) if not shown else result

    def read_note(args: Mapping[str, Any]) -> Any:
        note = store.find(args)
        return note.to_json()

    def create_note(args: Mapping[str, Any]) -> Any:
        note = store.create(
            str(args["note_name"]), opt_str(args, "body", "") or "", opt_str(args, "folder")
        )
        return note.summary()

    def append_to_note(args: Mapping[str, Any]) -> Any:
        return store.append(args, str(args["text"])).summary()

    def delete_note(args: Mapping[str, Any]) -> Any:
        note = store.find(args)
        if args.get("confirm") is not True:
            preview = {
                "preview": True,
                "action": "delete_note",
                "note": note.summary(),
                "confirm_required": "call again with confirm: true to delete this note",
            }
            return Reply(preview, Outcome.preview)
        store.delete(note)
        return {"deleted": True, "note_name": note.note_name, "note_id": note.note_id}

    return {
        "list_notes": list_notes,
        "read_note": read_note,
        "create_note": create_note,
        "append_to_note": append_to_note,
        "delete_note": delete_note,
    }
