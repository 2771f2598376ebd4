INSERT INTO skill_revision_events (revision_id, seq, status, actor, event_at)
SELECT $revision_id, coalesce(max(seq), 0) + 1, $status, $actor, $now
FROM skill_revision_events
WHERE revision_id = $revision_id;
