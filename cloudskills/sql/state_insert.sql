INSERT INTO skill_revision_state (revision_id, status) VALUES ($revision_id, $status);
