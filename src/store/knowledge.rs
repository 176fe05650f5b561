//! Knowledge metadata: which documents a pack loaded (`api_document`:
//! file, hash, chunks in the pack's index, status) and its domains (`knowledge_domain`),
//! from which the Planner's `available_knowledge_domains` is built.
//!
//! Upserts are select-then-write in one transaction rather than dialect
//! upsert syntax; a concurrent sync of the same pack that wins the race
//! simply leaves its (identical) rows.

use crate::knowledge::KnowledgeDoc;
use crate::store::connect::query_error;
use crate::store::db::{RowExt, now_ms, to_i64, with_pool};
use crate::store::{Store, StoreError};
use crate::text::error_line;
use crate::tools::pack::Pack;
use crate::vocab::catalog::DomainInfo;
use serde::{Deserialize, Serialize};

const FIND_DOC: &str = "SELECT id FROM api_document WHERE pack_name = ? AND file_name = ?";
const UPDATE_DOC: &str = "UPDATE api_document SET file_path = ?, title = ?, domain_id = ?, \
     file_hash = ?, chunk_count = ?, status = ?, metadata = ?, updated_at = ? WHERE id = ?";
const INSERT_DOC: &str = "INSERT INTO api_document (pack_name, file_name, file_path, title, \
     domain_id, file_hash, chunk_count, status, metadata, created_at, updated_at) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const PACK_DOCS: &str = "SELECT id, file_name FROM api_document WHERE pack_name = ?";
const DELETE_DOC: &str = "DELETE FROM api_document WHERE id = ?";
const FIND_DOMAIN: &str = "SELECT id FROM knowledge_domain WHERE domain_id = ?";
const UPDATE_DOMAIN: &str = "UPDATE knowledge_domain SET pack_name = ?, description = ?, \
     when_to_retrieve = ?, document_count = ?, updated_at = ? WHERE id = ?";
const INSERT_DOMAIN: &str = "INSERT INTO knowledge_domain (domain_id, pack_name, description, \
     when_to_retrieve, document_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
const DOMAINS: &str = "SELECT domain_id, description, when_to_retrieve, document_count \
     FROM knowledge_domain ORDER BY domain_id";
const DOCUMENTS: &str = "SELECT pack_name, file_name, file_path, title, domain_id, file_hash, \
     chunk_count, status FROM api_document WHERE pack_name = ? ORDER BY file_name";

/// Status of a document whose chunks are in the knowledge index.
pub const INDEXED: &str = "INDEXED";

/// An api_document row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentInfo {
    pub pack_name: String,
    pub file_name: String,
    pub file_path: String,
    pub title: String,
    pub domain: String,
    pub file_hash: String,
    pub chunk_count: u64,
    pub status: String,
}

/// How many chunks of `source` the pack's knowledge index holds.
fn indexed_chunks(pack: &Pack, source: &str) -> usize {
    pack.index
        .chunks()
        .iter()
        .filter(|c| c.source == source)
        .count()
}

fn doc_metadata(doc: &KnowledgeDoc) -> String {
    serde_json::json!({
        "title": doc.title,
        "domain": doc.domain,
        "when_to_retrieve": doc.when_to_retrieve,
    })
    .to_string()
}

impl Store {
    /// Records the pack's documents and domains; documents of this pack
    /// that are gone from it are removed.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn sync_knowledge(&self, pack: &Pack) -> Result<(), StoreError> {
        let pack_name = pack.manifest.name.as_str();
        let now = now_ms();
        let result: Result<(), sqlx::Error> = with_pool!(&self.db, p => async {
            let mut tx = crate::store::db::begin_write(p).await?;
            for doc in &pack.documents {
                let path = pack.dir.join("knowledge").join(&doc.source).display().to_string();
                let chunks = to_i64(indexed_chunks(pack, &doc.source));
                let meta = doc_metadata(doc);
                let found = sqlx::query(FIND_DOC).bind(pack_name).bind(&doc.source)
                    .fetch_optional(&mut *tx).await?;
                match found {
                    Some(row) => {
                        sqlx::query(UPDATE_DOC).bind(&path).bind(&doc.title).bind(&doc.domain)
                            .bind(&doc.hash).bind(chunks).bind(INDEXED).bind(&meta).bind(now)
                            .bind(row.int("id")?).execute(&mut *tx).await?;
                    }
                    None => {
                        sqlx::query(INSERT_DOC).bind(pack_name).bind(&doc.source).bind(&path)
                            .bind(&doc.title).bind(&doc.domain).bind(&doc.hash).bind(chunks)
                            .bind(INDEXED).bind(&meta).bind(now).bind(now)
                            .execute(&mut *tx).await?;
                    }
                }
            }
            let stored = sqlx::query(PACK_DOCS).bind(pack_name).fetch_all(&mut *tx).await?;
            for row in stored {
                let file = row.text("file_name")?;
                if !pack.documents.iter().any(|d| d.source == file) {
                    sqlx::query(DELETE_DOC).bind(row.int("id")?).execute(&mut *tx).await?;
                }
            }
            for d in &pack.domains {
                let found = sqlx::query(FIND_DOMAIN).bind(&d.domain).fetch_optional(&mut *tx).await?;
                let count = to_i64(d.document_count);
                match found {
                    Some(row) => {
                        sqlx::query(UPDATE_DOMAIN).bind(pack_name).bind(&d.description)
                            .bind(&d.when_to_retrieve).bind(count).bind(now).bind(row.int("id")?)
                            .execute(&mut *tx).await?;
                    }
                    None => {
                        sqlx::query(INSERT_DOMAIN).bind(&d.domain).bind(pack_name)
                            .bind(&d.description).bind(&d.when_to_retrieve).bind(count)
                            .bind(now).bind(now).execute(&mut *tx).await?;
                    }
                }
            }
            tx.commit().await
        }.await);
        match result {
            Ok(()) => Ok(()),
            Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Ok(()),
            Err(e) => Err(query_error(e)),
        }
    }

    /// Every recorded knowledge domain, by name.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn knowledge_domains(&self) -> Result<Vec<DomainInfo>, StoreError> {
        with_pool!(&self.db, p => {
            let rows = sqlx::query(DOMAINS).fetch_all(p).await.map_err(query_error)?;
            rows.iter().map(|r| Ok(DomainInfo {
                domain: r.text("domain_id")?,
                description: r.text("description")?,
                when_to_retrieve: r.text("when_to_retrieve")?,
                document_count: usize::try_from(r.int("document_count")?).unwrap_or(0),
            })).collect::<Result<Vec<_>, sqlx::Error>>().map_err(|e| StoreError::Query(error_line(&e)))
        })
    }

    /// The api_document rows of one pack, by file name.
    #[tracing::instrument(level = "debug", skip_all, err(level = "warn"))]
    pub async fn knowledge_documents(
        &self,
        pack_name: &str,
    ) -> Result<Vec<DocumentInfo>, StoreError> {
        with_pool!(&self.db, p => {
            let rows = sqlx::query(DOCUMENTS).bind(pack_name).fetch_all(p).await.map_err(query_error)?;
            rows.iter().map(|r| Ok(DocumentInfo {
                pack_name: r.text("pack_name")?,
                file_name: r.text("file_name")?,
                file_path: r.text("file_path")?,
                title: r.text("title")?,
                domain: r.text("domain_id")?,
                file_hash: r.text("file_hash")?,
                chunk_count: r.uint("chunk_count")?,
                status: r.text("status")?,
            })).collect::<Result<Vec<_>, sqlx::Error>>().map_err(query_error)
        })
    }
}
