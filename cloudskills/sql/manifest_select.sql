SELECT logical_path, type, mime_type, size, content_hash, artifact_ref, metadata
FROM skill_components
WHERE revision_id = $revision_id
ORDER BY ordinal;
