INSERT INTO skills (skill_id, scope_kind, scope_owner, slug, created_at)
VALUES ($skill_id, $kind, $owner, $slug, $now);
