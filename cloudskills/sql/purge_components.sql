-- Purge: a revision's components go (their hashes live on in the revision's canonical_hash).
DELETE FROM skill_components WHERE list_contains($ids::VARCHAR[], revision_id);
