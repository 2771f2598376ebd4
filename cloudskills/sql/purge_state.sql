-- Purge: without a state row a revision is invisible to every read.
DELETE FROM skill_revision_state WHERE list_contains($ids::VARCHAR[], revision_id);
