-- diagraph schema v7 (MySQL 8 / MariaDB 10.11). Keep in step with
-- migrations/sqlite/0007_process_lease.sql.
-- A server process sharing the database renews its lease here while it
-- lives (owner_token as in diagnosis_run.owner_token). A RUNNING run whose
-- owner's lease has expired is ended FAILED (interrupted) by any live
-- server: its owner died without ending it.
CREATE TABLE process_lease (
    owner_token VARCHAR(255) NOT NULL PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
