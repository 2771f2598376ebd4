-- The triage filter, defined once: the platform, tool and client-version filters a question
-- applies to the signals it reads (NULL means "any"). Questions call it as
--   triage_filter($platform, $tool, $v_major, $v_minor, $v_patch)
-- A macro is expanded where it is called, at bind time, so the plan is the one the same block
-- written inline gives (measured in docs/triage.md). It is a TEMP macro: created on the
-- connection that runs the question (run_sql does), so a read-only file can be asked too.
CREATE OR REPLACE TEMP MACRO triage_filter(f_platform, f_tool, f_major, f_minor, f_patch) AS (
    (f_platform IS NULL OR client_platform = CAST(f_platform AS platform))
    AND (f_tool IS NULL OR tool_attempted = CAST(f_tool AS tool_name))
    AND (f_major IS NULL OR client_version_major = f_major)
    AND (f_minor IS NULL OR client_version_minor = f_minor)
    AND (f_patch IS NULL OR client_version_patch = f_patch)
);
