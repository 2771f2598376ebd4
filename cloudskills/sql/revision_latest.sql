-- The newest revision of a skill, whatever its state (the hash-dedupe and numbering reference),
-- and its status (NULL once the revision was purged: the owner removed it, or it expired).
SELECT r.revision_id, r.revision_number, r.canonical_hash, st.status
FROM skill_revisions r
LEFT JOIN skill_revision_state st ON st.revision_id = r.revision_id
WHERE r.skill_id = $skill_id
ORDER BY r.revision_number DESC
LIMIT 1;
