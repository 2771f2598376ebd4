-- 0001: Cloud Skills, in its own database file (never the signals file). A skill lives in one
-- scope (a principal's personal scope or a team's) under a slug. Its revisions and their
-- components are written once and never updated or deleted: only skill_revision_state (the life
-- cycle: draft, proposed, published, rejected) changes, and every change is appended to
-- skill_revision_events. A rejected proposal stays on record.

CREATE TABLE skills (
    skill_id     VARCHAR PRIMARY KEY,
    scope_kind   VARCHAR NOT NULL CHECK (scope_kind IN ('personal', 'team')),
    scope_owner  VARCHAR NOT NULL,  -- the principal (personal) or the team
    slug         VARCHAR NOT NULL CHECK (length(slug) BETWEEN 1 AND 64),
    created_at   TIMESTAMP NOT NULL,
    UNIQUE (scope_kind, scope_owner, slug)
);

CREATE TABLE skill_revisions (
    revision_id      VARCHAR PRIMARY KEY,
    skill_id         VARCHAR NOT NULL REFERENCES skills (skill_id),
    revision_number  INTEGER NOT NULL CHECK (revision_number >= 1),
    name             VARCHAR NOT NULL,
    description      VARCHAR NOT NULL,
    instructions     VARCHAR NOT NULL,
    canonical_hash   VARCHAR NOT NULL CHECK (length(canonical_hash) = 64),
    component_count  INTEGER NOT NULL CHECK (component_count BETWEEN 0 AND 50),
    author           VARCHAR NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    UNIQUE (skill_id, revision_number)
);

CREATE TABLE skill_components (
    revision_id   VARCHAR NOT NULL REFERENCES skill_revisions (revision_id),
    ordinal       INTEGER NOT NULL,  -- canonical order: by logical_path
    logical_path  VARCHAR NOT NULL,
    type          VARCHAR NOT NULL
        CHECK (type IN ('asset', 'example', 'reference', 'schema', 'script', 'template')),
    mime_type     VARCHAR NOT NULL,
    metadata      VARCHAR NOT NULL,  -- RFC 8785 canonical JSON
    content       VARCHAR,
    artifact_ref  VARCHAR,
    size          INTEGER,
    content_hash  VARCHAR,
    CHECK ((content IS NULL) <> (artifact_ref IS NULL)),
    PRIMARY KEY (revision_id, logical_path)
);

CREATE TABLE skill_revision_state (
    revision_id  VARCHAR PRIMARY KEY REFERENCES skill_revisions (revision_id),
    status       VARCHAR NOT NULL CHECK (status IN ('draft', 'proposed', 'published', 'rejected'))
);

CREATE TABLE skill_revision_events (
    revision_id  VARCHAR NOT NULL REFERENCES skill_revisions (revision_id),
    seq          INTEGER NOT NULL,
    status       VARCHAR NOT NULL CHECK (status IN ('draft', 'proposed', 'published', 'rejected')),
    actor        VARCHAR NOT NULL,
    event_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (revision_id, seq)
);
