-- Proposed revisions never decided whose proposal is older than the cutoff.
SELECT st.revision_id
FROM skill_revision_state st
JOIN skill_revision_events e ON e.revision_id = st.revision_id AND e.status = 'proposed'
WHERE st.status = 'proposed'
GROUP BY st.revision_id
HAVING max(e.event_at) < $cutoff;
