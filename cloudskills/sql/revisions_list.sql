SELECT s.skill_id, s.slug, s.scope_kind, s.scope_owner, r.revision_id, r.revision_number,
       r.name, r.description, r.instructions, r.canonical_hash, r.author, st.status
FROM skills s
JOIN skill_revisions r ON r.skill_id = s.skill_id
JOIN skill_revision_state st ON st.revision_id = r.revision_id
WHERE s.scope_kind = $kind AND s.scope_owner = $owner AND s.slug = $slug
ORDER BY r.revision_number;
