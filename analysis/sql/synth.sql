-- Synthetic signals for benchmarks and demos: $count rows numbered from $first, generated
-- inside DuckDB. Realistic skew: a Zipf-like tool popularity, error classes that depend on the
-- tool's app, recent days busier than old ones, a spike (send_email timeouts, 9 days before
-- $end_day), version adoption waves and a regression (search_files timeouts from 1.4.0), app
-- state consistent with the error class, and ring patterns where retries and "list, then
-- fail" dominate. Deterministic apart from signal_id (random, as on the wire).
-- Columns are matched BY NAME (their one definition: collector/rows.py SIGNAL_COLUMNS).
INSERT INTO signals BY NAME
WITH
u AS (
    SELECT
        i,
        (hash(i, 1) % 1000003) / 1000003.0 AS u_tool,
        (hash(i, 2) % 1000003) / 1000003.0 AS u_class,
        (hash(i, 3) % 1000003) / 1000003.0 AS u_day,
        (hash(i, 4) % 1000003) / 1000003.0 AS u_version,
        (hash(i, 5) % 1000003) / 1000003.0 AS u_platform,
        (hash(i, 6) % 1000003) / 1000003.0 AS u_type,
        (hash(i, 7) % 1000003) / 1000003.0 AS u_category,
        (hash(i, 8) % 1000003) / 1000003.0 AS u_intent,
        (hash(i, 9) % 1000003) / 1000003.0 AS u_attempts,
        (hash(i, 10) % 1000003) / 1000003.0 AS u_ring,
        (hash(i, 11) % 1000003) / 1000003.0 AS u_prev1,
        (hash(i, 12) % 1000003) / 1000003.0 AS u_prev2,
        (hash(i, 13) % 1000003) / 1000003.0 AS u_special
    FROM range($first, $first + $count) t(i)
),
k AS (
    SELECT
        ['read_note', 'list_emails', 'read_file', 'send_email', 'search_files', 'recipe_run',
         'create_note', 'write_file', 'read_email', 'append_to_note', 'list_notes', 'list_files',
         'execute_cloud_skill', 'recall_cloud_skill', 'recipe_save', 'delete_note',
         'save_cloud_skill', 'recipe_import', 'get_datetime', 'recipe_export', 'other'] AS tools,
        MAP {
            'read_note': 'notes', 'create_note': 'notes', 'append_to_note': 'notes',
            'list_notes': 'notes', 'delete_note': 'notes', 'list_emails': 'mail',
            'send_email': 'mail', 'read_email': 'mail', 'read_file': 'files',
            'search_files': 'files', 'write_file': 'files', 'list_files': 'files',
            'recipe_run': 'recipes', 'recipe_save': 'recipes', 'recipe_import': 'recipes',
            'recipe_export': 'recipes', 'execute_cloud_skill': 'cloud_skills',
            'recall_cloud_skill': 'cloud_skills', 'save_cloud_skill': 'cloud_skills',
            'get_datetime': 'system', 'other': 'other'
        } AS app_of,
        MAP {
            'notes': ['not_found', 'not_found', 'invalid_arguments', 'permission_denied',
                      'app_not_running', 'empty_result', 'app_not_installed', 'timeout',
                      'needs_confirmation', 'internal_error'],
            'mail': ['not_found', 'permission_denied', 'invalid_arguments', 'app_not_running',
                     'timeout', 'empty_result', 'app_not_installed', 'too_large',
                     'needs_confirmation', 'internal_error'],
            'files': ['not_found', 'permission_denied', 'invalid_arguments', 'too_large',
                      'empty_result', 'internal_error'],
            'recipes': ['step_failed', 'step_failed', 'not_found', 'invalid_arguments',
                        'conflict', 'needs_confirmation'],
            'cloud_skills': ['unavailable', 'not_found', 'invalid_arguments', 'timeout',
                             'conflict'],
            'system': ['invalid_arguments'],
            'other': ['unknown_tool']
        } AS classes_of,
        MAP {
            'notes': 'list_notes', 'mail': 'list_emails', 'files': 'list_files',
            'recipes': 'recipe_list', 'cloud_skills': 'recall_cloud_skill',
            'system': 'get_datetime', 'other': 'other'
        } AS companion_of,
        MAP {
            'read_note': ['note_name'], 'list_emails': ['mailbox', 'query', 'limit'],
            'read_file': ['path'], 'send_email': ['to', 'subject', 'body'],
            'search_files': ['query', 'path'], 'recipe_run': ['name', 'params'],
            'create_note': ['note_name', 'body'], 'write_file': ['path', 'content'],
            'read_email': ['message_id'], 'append_to_note': ['note_name', 'text'],
            'list_notes': ['folder'], 'list_files': ['path', 'recursive'],
            'execute_cloud_skill': ['slug', 'revision_id', 'canonical_hash', 'logical_path'],
            'recall_cloud_skill': ['query'], 'recipe_save': ['manifest'],
            'delete_note': ['note_name', 'confirm'], 'save_cloud_skill': ['name', 'instructions'],
            'recipe_import': ['document'], 'get_datetime': ['timezone'],
            'recipe_export': ['name'], 'other': ['other']
        } AS args_of,
        MAP {
            'notes': 'manage_note', 'mail': 'find_email', 'files': 'read_file',
            'recipes': 'run_command', 'cloud_skills': 'cloud_storage', 'system': 'other',
            'other': 'other'
        } AS intent_of
),
picked AS (
    SELECT
        u.*,
        CASE WHEN u_special < 0.02 THEN 9
             ELSE CAST(floor(90 * pow(u_day, 1.3)) AS INTEGER) END AS age,
        k.tools[1 + CAST(floor(21 * pow(u_tool, 2.2)) AS INTEGER)] AS base_tool,
        k.*
    FROM u, k
),
versioned AS (
    SELECT
        *,
        least(5, CASE
            WHEN age <= 8 THEN 1 WHEN age <= 28 THEN 2 WHEN age <= 50 THEN 3
            WHEN age <= 75 THEN 4 ELSE 5
        END + CASE WHEN u_version < 0.6 THEN 0 WHEN u_version < 0.9 THEN 1 ELSE 2 END) AS v_idx
    FROM picked
),
chosen AS (
    SELECT
        *,
        CASE
            WHEN u_special < 0.02 THEN 'send_email'
            WHEN v_idx <= 2 AND u_special < 0.14 THEN 'search_files'
            WHEN v_idx = 1 AND u_special < 0.20 THEN 'recipe_run'
            ELSE base_tool
        END AS tool
    FROM versioned
),
classified AS (
    SELECT
        *,
        app_of[tool] AS app,
        CASE
            WHEN u_special < 0.02 THEN 'timeout'
            WHEN v_idx <= 2 AND u_special < 0.14 THEN 'timeout'
            WHEN v_idx = 1 AND u_special < 0.20 THEN 'internal_error'
            ELSE classes_of[app_of[tool]][
                1 + CAST(floor(len(classes_of[app_of[tool]]) * pow(u_class, 1.6)) AS INTEGER)]
        END AS cls
    FROM chosen
),
shaped AS (
    SELECT
        *,
        CASE cls
            WHEN 'invalid_arguments' THEN 'invalid' WHEN 'unknown_tool' THEN 'invalid'
            WHEN 'empty_result' THEN 'empty' WHEN 'needs_confirmation' THEN 'preview'
            ELSE 'failed'
        END AS last_outcome,
        CASE
            WHEN u_ring < 0.08 THEN 1 WHEN u_ring < 0.16 THEN 2 WHEN u_ring < 0.25 THEN 3
            WHEN u_ring < 0.40 THEN 6 ELSE 10
        END AS ring_len,
        CASE
            WHEN u_prev1 < 0.45 THEN {'tool': tool, 'outcome': 'failed'}
            WHEN u_prev1 < 0.75 THEN {'tool': companion_of[app], 'outcome': 'ok'}
            ELSE {'tool': tools[1 + CAST(floor(21 * pow(u_prev1, 3)) AS INTEGER) % 21],
                  'outcome': 'ok'}
        END AS p1,
        CASE
            WHEN u_prev2 < 0.5 THEN {'tool': companion_of[app], 'outcome': 'ok'}
            WHEN u_prev2 < 0.6 THEN {'tool': companion_of[app], 'outcome': 'empty'}
            ELSE {'tool': tools[1 + CAST(floor(21 * pow(u_prev2, 3)) AS INTEGER) % 21],
                  'outcome': 'ok'}
        END AS p2
    FROM classified
),
rings AS (
    SELECT
        *,
        list_slice(
            list_transform(range(7), lambda j: {
                'tool': tools[1 + CAST(hash(i, 20 + j) % 21 AS INTEGER)], 'outcome': 'ok'})
            || [p2, p1, {'tool': tool, 'outcome': last_outcome}],
            11 - ring_len, 10) AS full_ring
    FROM shaped
)
SELECT
    gen_random_uuid() AS signal_id,
    2 AS schema_version,
    $end_day - CAST(age AS INTEGER) AS day,
    $end_day - CAST(age AS INTEGER) + CASE WHEN u_type < 0.1 AND age > 0 THEN 1 ELSE 0 END
        AS received_day,
    CASE
        WHEN u_category < 0.35 THEN 'repeated_failure' WHEN u_category < 0.65 THEN 'cannot_complete'
        WHEN u_category < 0.85 THEN 'workaround_needed' WHEN u_category < 0.97 THEN 'task_abandoned'
        ELSE 'other'
    END AS friction_type,
    CASE
        WHEN u_category * 7 % 1 < 0.15 THEN NULL
        WHEN cls IN ('permission_denied', 'app_not_installed', 'app_not_running') THEN 'permission'
        WHEN cls = 'timeout' THEN 'timeout'
        WHEN cls = 'not_found' THEN 'not_found'
        WHEN cls = 'empty_result' THEN 'empty'
        WHEN cls = 'invalid_arguments' THEN 'parse'
        WHEN cls = 'internal_error' THEN 'crash'
        WHEN cls = 'unknown_tool' THEN 'missing_capability'
        ELSE 'other'
    END AS error_category,
    CASE
        WHEN u_intent < 0.2 THEN NULL
        WHEN tool = 'send_email' THEN 'send_email'
        WHEN tool = 'read_email' THEN 'read_email'
        WHEN tool = 'write_file' THEN 'write_file'
        WHEN tool = 'search_files' THEN 'search_files'
        WHEN u_intent > 0.93 THEN 'document_work'
        ELSE intent_of[app]
    END AS intent_category,
    tool AS tool_attempted,
    CASE WHEN u_attempts < 0.25 THEN NULL
         ELSE ['1', '2', '3-5', '3-5', '3-5', '6-10', '6-10', '6-10', '6-10', '6-10', 'more',
               'more', 'more'][1 + CAST(floor(12 * pow((u_attempts - 0.25) / 0.75, 4)) AS INTEGER)]
    END AS attempts,
    cls AS error_class,
    list_transform(args_of[tool], lambda a, j: {
        'name': a,
        'type': CASE
            WHEN cls = 'invalid_arguments' AND j = 1 AND u_type < 0.4 THEN 'integer'
            WHEN a IN ('limit') THEN 'integer'
            WHEN a IN ('recursive', 'confirm') THEN 'boolean'
            WHEN a IN ('params', 'manifest', 'document') THEN 'object'
            WHEN a IN ('to') THEN 'array'
            ELSE 'string'
        END,
        'size': CASE
            WHEN cls = 'invalid_arguments' AND j = 1 AND u_type < 0.4 THEN NULL
            WHEN a IN ('limit', 'recursive', 'confirm') THEN NULL
            WHEN cls = 'invalid_arguments' AND j = 1 THEN '0'
            WHEN a IN ('params', 'manifest', 'document', 'to') THEN '1-16'
            WHEN a IN ('body', 'content', 'text', 'instructions') THEN
                ['17-256', '257-4K', '4K-64K', '64K-1M'][
                    1 + CAST(floor(4 * pow((hash(i, 30 + j) % 1000) / 1000.0, 2)) AS INTEGER)]
            WHEN cls = 'too_large' THEN '4K-64K'
            ELSE ['1-16', '17-256'][1 + CAST(hash(i, 30 + j) % 2 AS INTEGER)]
        END}) AS args,
    full_ring AS ring,
    CASE WHEN ring_len >= 2 THEN p1.tool END AS prev1_tool,
    CASE WHEN ring_len >= 2 THEN p1.outcome END AS prev1_outcome,
    CASE WHEN ring_len >= 3 THEN p2.tool END AS prev2_tool,
    CASE WHEN ring_len >= 3 THEN p2.outcome END AS prev2_outcome,
    CASE WHEN app IN ('notes', 'mail', 'files') THEN cls <> 'app_not_installed' END
        AS app_installed,
    CASE WHEN app IN ('notes', 'mail', 'files')
         THEN cls NOT IN ('app_not_installed', 'app_not_running') END AS app_running,
    CASE WHEN app IN ('notes', 'mail', 'files') THEN cls <> 'permission_denied' END
        AS app_permitted,
    1 AS client_version_major,
    [4, 4, 3, 3, 2][v_idx] AS client_version_minor,
    [1, 0, 1, 0, 0][v_idx] AS client_version_patch,
    CASE WHEN u_platform < 0.55 THEN 'macos' WHEN u_platform < 0.9 THEN 'windows' ELSE 'linux' END
        AS client_platform
FROM rings
ORDER BY day;
