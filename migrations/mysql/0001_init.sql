-- diagraph schema v1 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0001_init.sql. JSON is LONGTEXT, not JSON: MySQL's JSON
-- type re-sorts object keys, and exact replay needs the text back as written.
-- Unique keys on text stay under InnoDB's 3072-byte index limit in utf8mb4.

CREATE TABLE chat_session (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    session_id VARCHAR(128) NOT NULL,
    title VARCHAR(255) NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_session_id (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE diagnosis_run (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    session_id VARCHAR(128) NOT NULL,
    status VARCHAR(16) NOT NULL,
    agent_flow VARCHAR(16) NOT NULL DEFAULT 'CHAT',
    query TEXT NOT NULL,
    answer LONGTEXT NOT NULL,
    model VARCHAR(255) NOT NULL DEFAULT '',
    pack TEXT,
    scenario VARCHAR(255),
    degraded TINYINT NOT NULL DEFAULT 0,
    effective_verdict VARCHAR(16),
    total_duration_ms BIGINT,
    total_token_count BIGINT NOT NULL DEFAULT 0,
    step_count BIGINT NOT NULL DEFAULT 0,
    tool_call_count BIGINT NOT NULL DEFAULT 0,
    self_evaluation LONGTEXT,
    orchestration_trace LONGTEXT,
    failure_reason TEXT,
    feedback VARCHAR(16),
    owner_pid BIGINT NOT NULL DEFAULT 0,
    owner_host VARCHAR(255) NOT NULL DEFAULT '',
    owner_token VARCHAR(255) NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT,
    KEY idx_run_session (session_id, id),
    KEY idx_run_status (status),
    CONSTRAINT fk_run_session FOREIGN KEY (session_id) REFERENCES chat_session (session_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE agent_step (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id BIGINT NOT NULL,
    session_id VARCHAR(128) NOT NULL,
    seq BIGINT NOT NULL,
    step_index BIGINT NOT NULL,
    agent_name VARCHAR(64) NOT NULL,
    attempt BIGINT NOT NULL DEFAULT 1,
    model_input LONGTEXT NOT NULL,
    model_output LONGTEXT NOT NULL,
    thought TEXT NOT NULL,
    has_tool_call TINYINT NOT NULL DEFAULT 0,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    token_count BIGINT NOT NULL DEFAULT 0,
    error_message TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_step_seq (run_id, seq),
    CONSTRAINT fk_step_run FOREIGN KEY (run_id) REFERENCES diagnosis_run (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE tool_invocation (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id BIGINT NOT NULL,
    session_id VARCHAR(128) NOT NULL,
    step_id BIGINT,
    seq BIGINT NOT NULL,
    tool_name VARCHAR(128) NOT NULL,
    input_params LONGTEXT NOT NULL,
    output_preview LONGTEXT NOT NULL,
    output_length BIGINT NOT NULL DEFAULT 0,
    retrieval_layer VARCHAR(32),
    l0_match_count BIGINT,
    l1_match_count BIGINT,
    is_truncated TINYINT NOT NULL DEFAULT 0,
    relevance_level VARCHAR(32),
    dedup_reason TEXT,
    retrieval_details LONGTEXT NOT NULL,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    success TINYINT NOT NULL DEFAULT 1,
    error_message TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_invocation_seq (run_id, seq),
    CONSTRAINT fk_invocation_run FOREIGN KEY (run_id) REFERENCES diagnosis_run (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE run_event (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    event_type VARCHAR(64) NOT NULL,
    at_ms BIGINT NOT NULL,
    payload LONGTEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_event_seq (run_id, seq),
    CONSTRAINT fk_event_run FOREIGN KEY (run_id) REFERENCES diagnosis_run (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE api_document (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    pack_name VARCHAR(191) NOT NULL,
    file_name VARCHAR(512) NOT NULL,
    file_path TEXT NOT NULL,
    title VARCHAR(512) NOT NULL DEFAULT '',
    domain_id VARCHAR(191) NOT NULL,
    file_hash VARCHAR(128) NOT NULL,
    chunk_count BIGINT NOT NULL DEFAULT 0,
    status VARCHAR(16) NOT NULL,
    metadata LONGTEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_document_file (pack_name, file_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE knowledge_domain (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    domain_id VARCHAR(191) NOT NULL,
    pack_name VARCHAR(191) NOT NULL,
    description TEXT NOT NULL,
    when_to_retrieve TEXT NOT NULL,
    document_count BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_domain_id (domain_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE case_library (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    case_id VARCHAR(64) NOT NULL,
    run_id BIGINT NOT NULL,
    diagnosis_id VARCHAR(128) NOT NULL,
    source_type VARCHAR(16) NOT NULL DEFAULT 'AUTO',
    fault_category VARCHAR(32) NOT NULL DEFAULT 'GENERAL',
    title VARCHAR(255) NOT NULL,
    root_cause LONGTEXT NOT NULL,
    solution LONGTEXT NOT NULL,
    created_by VARCHAR(64) NOT NULL DEFAULT 'system',
    created_at BIGINT NOT NULL,
    UNIQUE KEY uq_case_id (case_id),
    UNIQUE KEY uq_case_run (run_id),
    CONSTRAINT fk_case_run FOREIGN KEY (run_id) REFERENCES diagnosis_run (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
