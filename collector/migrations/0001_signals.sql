-- 0001: the signals table. Every column is an enum, a bool, a bounded int, a date or a UUID.
-- ENUM values mirror contract/schema (a test checks); a new catalogue tool needs a new migration.
-- No column can hold an address, a user agent, free text or a time finer than a day.

CREATE TYPE friction_type AS ENUM ('repeated_failure', 'task_abandoned', 'workaround_needed', 'cannot_complete', 'other');
CREATE TYPE error_category AS ENUM ('permission', 'timeout', 'empty', 'not_found', 'parse', 'wrong_result', 'missing_capability', 'crash', 'other');
CREATE TYPE intent_category AS ENUM ('find_email', 'read_email', 'send_email', 'send_message', 'read_messages', 'schedule_event', 'read_calendar', 'manage_reminder', 'manage_note', 'manage_contact', 'read_file', 'write_file', 'search_files', 'document_work', 'cloud_storage', 'browse_web', 'run_command', 'other');
CREATE TYPE error_class AS ENUM ('invalid_arguments', 'unknown_tool', 'not_found', 'permission_denied', 'app_not_installed', 'app_not_running', 'conflict', 'too_large', 'timeout', 'unavailable', 'empty_result', 'needs_confirmation', 'step_failed', 'internal_error', 'no_failure');
CREATE TYPE outcome AS ENUM ('ok', 'empty', 'preview', 'invalid', 'failed');
CREATE TYPE arg_type AS ENUM ('string', 'integer', 'number', 'boolean', 'null', 'array', 'object');
CREATE TYPE size_bucket AS ENUM ('0', '1-16', '17-256', '257-4K', '4K-64K', '64K-1M', '1M+');
CREATE TYPE platform AS ENUM ('macos', 'windows', 'linux');
CREATE TYPE tool_name AS ENUM ('append_to_note', 'create_note', 'delete_note', 'execute_cloud_skill', 'get_datetime', 'list_emails', 'list_files', 'list_notes', 'read_email', 'read_file', 'read_note', 'recall_cloud_skill', 'recipe_delete', 'recipe_export', 'recipe_import', 'recipe_list', 'recipe_run', 'recipe_save', 'report_friction', 'save_cloud_skill', 'search_files', 'send_email', 'write_file', 'other');
CREATE TYPE arg_name AS ENUM ('args', 'attempt_count', 'body', 'canonical_hash', 'cc', 'components_json', 'confirm', 'content', 'description', 'document', 'error_category', 'folder', 'friction_type', 'instructions', 'intent_category', 'limit', 'logical_path', 'mailbox', 'manifest', 'max_bytes', 'message_id', 'name', 'note_id', 'note_name', 'overwrite', 'params', 'path', 'publish', 'query', 'recursive', 'resource_path', 'revision_id', 'slug', 'subject', 'team', 'text', 'timezone', 'to', 'tool_attempted', 'unread_only', 'other');

CREATE TABLE signals (
    signal_id       UUID PRIMARY KEY,
    schema_version  UTINYINT NOT NULL,
    day             DATE NOT NULL,
    received_day    DATE NOT NULL,
    friction_type   friction_type NOT NULL,
    error_category  error_category,
    intent_category intent_category,
    tool_attempted  tool_name NOT NULL,
    attempt_count   UTINYINT CHECK (attempt_count BETWEEN 1 AND 100),
    error_class     error_class NOT NULL,
    args            STRUCT(name arg_name, "type" arg_type, size size_bucket)[] NOT NULL,
    ring            STRUCT(tool tool_name, outcome outcome)[] NOT NULL,
    -- The two calls right before the last ring entry, shaped at ingest so ring-pattern
    -- questions are plain GROUP BYs (NULL when the ring is shorter).
    prev1_tool      tool_name,
    prev1_outcome   outcome,
    prev2_tool      tool_name,
    prev2_outcome   outcome,
    app_installed   BOOLEAN,
    app_running     BOOLEAN,
    app_permitted   BOOLEAN,
    client_version_major USMALLINT NOT NULL,
    client_version_minor USMALLINT NOT NULL,
    client_version_patch USMALLINT NOT NULL,
    client_platform platform NOT NULL
);
