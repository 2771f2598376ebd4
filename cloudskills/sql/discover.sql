-- Level 0 discovery: the newest published revision of every skill the caller may see whose
-- name or description holds every query token (case-insensitive).
WITH live AS (
    SELECT s.skill_id, s.slug, s.scope_kind, s.scope_owner, r.revision_id, r.revision_number,
           r.name, r.description, r.canonical_hash,
           row_number() OVER (PARTITION BY s.skill_id ORDER BY r.revision_number DESC) AS newest
    FROM skills s
    JOIN skill_revisions r ON r.skill_id = s.skill_id
    JOIN skill_revision_state st ON st.revision_id = r.revision_id
    WHERE st.status = 'published'
      AND ((s.scope_kind = 'personal' AND s.scope_owner = $principal)
           OR (s.scope_kind = 'team' AND list_contains($teams::VARCHAR[], s.scope_owner)))
)
SELECT skill_id, slug, scope_kind, scope_owner, revision_id, revision_number, name,
       description, canonical_hash
FROM live
WHERE newest = 1
  AND (len($tokens::VARCHAR[]) = 0
       OR list_bool_and([contains(lower(name || ' ' || description), tok)
                         FOR tok IN $tokens::VARCHAR[]]))
ORDER BY scope_kind, scope_owner, slug
LIMIT $limit;
