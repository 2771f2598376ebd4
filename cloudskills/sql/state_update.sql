UPDATE skill_revision_state SET status = $status WHERE revision_id = $revision_id;
