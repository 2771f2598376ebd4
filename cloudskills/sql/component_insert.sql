INSERT INTO skill_components (
    revision_id, ordinal, logical_path, type, mime_type, metadata, content, artifact_ref, size,
    content_hash
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?);
