SELECT skill_id FROM skills WHERE scope_kind = $kind AND scope_owner = $owner AND slug = $slug;
