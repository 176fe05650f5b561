-- diagraph schema v1 (SQLite). Keep in step with migrations/mysql/0001_init.sql:
-- same tables, same columns, same constraints; only the type names differ.
-- Times are epoch milliseconds (INTEGER) so both dialects compare them alike.
-- JSON is stored as text: it round-trips byte for byte (key order kept).

CREATE TABLE chat_session (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE diagnosis_run (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES chat_session(session_id),
    status TEXT NOT NULL,
    agent_flow TEXT NOT NULL DEFAULT 'CHAT',
    query TEXT NOT NULL,
    answer TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    pack TEXT,
    scenario TEXT,
    degraded INTEGER NOT NULL DEFAULT 0,
    effective_verdict TEXT,
    total_duration_ms INTEGER,
    total_token_count INTEGER NOT NULL DEFAULT 0,
    step_count INTEGER NOT NULL DEFAULT 0,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    self_evaluation TEXT,
    orchestration_trace TEXT,
    failure_reason TEXT,
    feedback TEXT,
    owner_pid INTEGER NOT NULL DEFAULT 0,
    owner_host TEXT NOT NULL DEFAULT '',
    owner_token TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX idx_run_session ON diagnosis_run(session_id, id);
CREATE INDEX idx_run_status ON diagnosis_run(status);

CREATE TABLE agent_step (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES diagnosis_run(id),
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step_index INTEGER NOT NULL,
    agent_name TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 1,
    model_input TEXT NOT NULL DEFAULT '',
    model_output TEXT NOT NULL DEFAULT '',
    thought TEXT NOT NULL DEFAULT '',
    has_tool_call INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    token_count INTEGER NOT NULL DEFAULT 0,
    error_message TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

CREATE TABLE tool_invocation (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES diagnosis_run(id),
    session_id TEXT NOT NULL,
    step_id INTEGER,
    seq INTEGER NOT NULL,
    tool_name TEXT NOT NULL,
    input_params TEXT NOT NULL,
    output_preview TEXT NOT NULL DEFAULT '',
    output_length INTEGER NOT NULL DEFAULT 0,
    retrieval_layer TEXT,
    l0_match_count INTEGER,
    l1_match_count INTEGER,
    is_truncated INTEGER NOT NULL DEFAULT 0,
    relevance_level TEXT,
    dedup_reason TEXT,
    retrieval_details TEXT NOT NULL,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    success INTEGER NOT NULL DEFAULT 1,
    error_message TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

CREATE TABLE run_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES diagnosis_run(id),
    seq INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

CREATE TABLE api_document (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pack_name TEXT NOT NULL,
    file_name TEXT NOT NULL,
    file_path TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    domain_id TEXT NOT NULL,
    file_hash TEXT NOT NULL,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    metadata TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (pack_name, file_name)
);

CREATE TABLE knowledge_domain (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_id TEXT NOT NULL UNIQUE,
    pack_name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    when_to_retrieve TEXT NOT NULL DEFAULT '',
    document_count INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE case_library (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id TEXT NOT NULL UNIQUE,
    run_id INTEGER NOT NULL UNIQUE REFERENCES diagnosis_run(id),
    diagnosis_id TEXT NOT NULL,
    source_type TEXT NOT NULL DEFAULT 'AUTO',
    fault_category TEXT NOT NULL DEFAULT 'GENERAL',
    title TEXT NOT NULL,
    root_cause TEXT NOT NULL,
    solution TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT 'system',
    created_at INTEGER NOT NULL
);
