-- The newest revision of a skill, whatever its state (the hash-dedupe and numbering reference).
SELECT revision_id, revision_number, canonical_hash
FROM skill_revisions
WHERE skill_id = $skill_id
ORDER BY revision_number DESC
LIMIT 1;
