"""Cloud Skills: versioned, reviewed, shareable procedures, served by their own service.

``create_app(settings)`` (``cloudskills.app``) with ``SkillsSettings`` (``cloudskills.settings``,
``LMCP_SKILLS_*``) and its own DuckDB file and migrations (``cloudskills/migrations``): skills
(authors, timestamps) never share a store with the anonymous signals. ``lmcp skills serve``.
"""
