SELECT logical_path, type, mime_type, size, content_hash, artifact_ref, metadata, content
FROM skill_components
WHERE revision_id = $revision_id AND logical_path = $logical_path;
