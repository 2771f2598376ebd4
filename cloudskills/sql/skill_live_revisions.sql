-- Every not-yet-purged revision of a skill in a scope (a purge removes the state row).
SELECT r.revision_id
FROM skills s
JOIN skill_revisions r ON r.skill_id = s.skill_id
JOIN skill_revision_state st ON st.revision_id = r.revision_id
WHERE s.scope_kind = $kind AND s.scope_owner = $owner AND s.slug = $slug;
