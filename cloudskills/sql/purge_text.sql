-- Purge: a revision keeps its number, hash, author and time; its text is emptied.
UPDATE skill_revisions SET name = '', description = '', instructions = ''
WHERE list_contains($ids::VARCHAR[], revision_id);
