INSERT INTO skill_revisions (
    revision_id, skill_id, revision_number, name, description, instructions, canonical_hash,
    component_count, author, created_at
) VALUES (
    $revision_id, $skill_id, $revision_number, $name, $description, $instructions,
    $canonical_hash, $component_count, $author, $now
);
