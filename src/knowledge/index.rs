//! BM25 index over knowledge chunks (tantivy, in RAM).
//!
//! The index is built once per pack load and never changes, so it keeps one
//! `Searcher` for its whole life: a query costs a tokenisation and a
//! tantivy search, never a rebuild. Queries are built from terms directly
//! (not through tantivy's query parser) because the query text comes from a
//! model and must not be able to inject query syntax or fail to parse.

use crate::knowledge::KnowledgeChunk;
use crate::knowledge::tokenizer::{MixedTokenizer, tokenize};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexWriter, Searcher, TantivyDocument, Term};

/// A hit scoring below this fraction of the best hit is dropped: BM25
/// ranks every section that shares one common word with the query, and a
/// tail of weak matches is noise to whoever reads the answer.
pub const MIN_RELATIVE_SCORE: f32 = 0.3;

/// Writer memory budget; tantivy's floor is 15 MB per thread.
const WRITER_BUDGET: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeHit {
    pub source: String,
    pub breadcrumb: String,
    pub domain: String,
    pub text: String,
    pub score: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    text: Field,
    breadcrumb: Field,
    domain: Field,
    ord: Field,
}

/// In-memory index. Built once per pack load.
pub struct KnowledgeIndex {
    chunks: Vec<KnowledgeChunk>,
    fields: Fields,
    searcher: Searcher,
}

impl KnowledgeIndex {
    pub fn build(chunks: Vec<KnowledgeChunk>) -> Result<KnowledgeIndex, String> {
        let mut sb = Schema::builder();
        let text_opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(MixedTokenizer::NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields = Fields {
            text: sb.add_text_field("text", text_opts.clone()),
            breadcrumb: sb.add_text_field("breadcrumb", text_opts),
            domain: sb.add_text_field("domain", STRING),
            ord: sb.add_u64_field("ord", FAST),
        };
        let index = Index::create_in_ram(sb.build());
        index
            .tokenizers()
            .register(MixedTokenizer::NAME, MixedTokenizer);
        let err = |e: tantivy::TantivyError| format!("knowledge index: {e}");
        let mut writer: IndexWriter = index
            .writer_with_num_threads(1, WRITER_BUDGET)
            .map_err(err)?;
        for (ord, c) in chunks.iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_text(fields.text, &c.text);
            doc.add_text(fields.breadcrumb, &c.breadcrumb);
            doc.add_text(fields.domain, c.domain.to_lowercase());
            doc.add_u64(fields.ord, ord as u64);
            writer.add_document(doc).map_err(err)?;
        }
        writer.commit().map_err(err)?;
        // Merges would only cost time here: the index is read-only from now on.
        drop(writer);
        let reader = index.reader().map_err(err)?;
        Ok(KnowledgeIndex {
            chunks,
            fields,
            searcher: reader.searcher(),
        })
    }

    pub fn chunks(&self) -> &[KnowledgeChunk] {
        &self.chunks
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Top `limit` chunks for `query`, optionally within one domain.
    pub fn search(&self, query: &str, domain: Option<&str>, limit: usize) -> Vec<KnowledgeHit> {
        self.try_search(query, domain, limit).unwrap_or_default()
    }

    fn try_search(
        &self,
        query: &str,
        domain: Option<&str>,
        limit: usize,
    ) -> Result<Vec<KnowledgeHit>, tantivy::TantivyError> {
        let terms: BTreeSet<String> = tokenize(query).into_iter().collect();
        if terms.is_empty() || limit == 0 || self.chunks.is_empty() {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(terms.len() * 2);
        for t in &terms {
            should.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.text, t),
                    IndexRecordOption::WithFreqs,
                )),
            ));
            // A breadcrumb hit scores on its own short field, which already
            // weighs it above a body hit. No BoostQuery: tantivy only uses
            // block-WAND pruning when every clause is a plain term query.
            should.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.breadcrumb, t),
                    IndexRecordOption::WithFreqs,
                )),
            ));
        }
        let terms_query: Box<dyn Query> = Box::new(BooleanQuery::new(should));
        let q: Box<dyn Query> = match domain.map(str::trim).filter(|d| !d.is_empty()) {
            Some(d) => Box::new(BooleanQuery::new(vec![
                (
                    Occur::Must,
                    Box::new(TermQuery::new(
                        Term::from_field_text(f.domain, &d.to_lowercase()),
                        IndexRecordOption::Basic,
                    )),
                ),
                (Occur::Must, terms_query),
            ])),
            None => terms_query,
        };
        let top = self
            .searcher
            .search(&q, &TopDocs::with_limit(limit).order_by_score())?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let Some(seg) = self
                .searcher
                .segment_readers()
                .get(addr.segment_ord as usize)
            else {
                continue;
            };
            let ord = seg.fast_fields().u64("ord")?.first(addr.doc_id);
            let Some(chunk) = ord.and_then(|o| self.chunks.get(o as usize)) else {
                continue;
            };
            hits.push(KnowledgeHit {
                source: chunk.source.clone(),
                breadcrumb: chunk.breadcrumb.clone(),
                domain: chunk.domain.clone(),
                text: chunk.text.clone(),
                score,
            });
        }
        let best = hits.iter().map(|h| h.score).fold(0.0_f32, f32::max);
        hits.retain(|h| h.score >= best * MIN_RELATIVE_SCORE);
        Ok(hits)
    }
}

impl std::fmt::Debug for KnowledgeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeIndex")
            .field("chunks", &self.chunks.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(source: &str, domain: &str, crumb: &str, text: &str) -> KnowledgeChunk {
        KnowledgeChunk {
            source: source.into(),
            breadcrumb: crumb.into(),
            domain: domain.into(),
            text: text.into(),
        }
    }

    fn index() -> KnowledgeIndex {
        KnowledgeIndex::build(vec![
            chunk(
                "db/pool.md",
                "database",
                "Pool > Meaning",
                "HikariPool-1 connection is not available, request timed out",
            ),
            chunk(
                "jvm/gc.md",
                "jvm",
                "GC > Diagnosis",
                "long garbage collection pauses raise CPU usage",
            ),
            chunk(
                "zh/pool.md",
                "database",
                "连接池 > 诊断",
                "数据库连接池耗尽时, 请求会超时",
            ),
        ])
        .unwrap()
    }

    #[test]
    fn bm25_ranks_the_matching_section_first() {
        let hits = index().search("connection pool timed out", None, 5);
        assert_eq!(hits[0].source, "db/pool.md");
        assert!(hits.iter().all(|h| h.source != "jvm/gc.md"));
    }

    #[test]
    fn chinese_query_finds_chinese_text() {
        let hits = index().search("连接池耗尽", None, 5);
        assert_eq!(hits.first().map(|h| h.source.as_str()), Some("zh/pool.md"));
    }

    #[test]
    fn domain_filter_restricts_results() {
        let idx = index();
        assert!(idx.search("cpu", Some("database"), 5).is_empty());
        assert_eq!(idx.search("cpu", Some("JVM"), 5).len(), 1);
    }

    #[test]
    fn weak_matches_below_the_cutoff_are_dropped() {
        let mut chunks = vec![chunk(
            "db/pool.md",
            "database",
            "Connection pool exhausted > Diagnosis",
            "connection pool exhausted: every connection is in use and requests wait for the pool",
        )];
        for i in 0..20 {
            chunks.push(chunk(
                &format!("misc/{i}.md"),
                "misc",
                &format!("Misc {i} > Notes"),
                "a long section about unrelated things that mentions a connection once among many other words about disks, caches, queues, schedulers and certificates",
            ));
        }
        let idx = KnowledgeIndex::build(chunks).unwrap();
        let hits = idx.search("connection pool exhausted", None, 10);
        assert_eq!(hits[0].source, "db/pool.md");
        let best = hits[0].score;
        assert!(hits.iter().all(|h| h.score >= best * MIN_RELATIVE_SCORE));
        assert!(hits.len() < 10, "{} hits", hits.len());
    }

    #[test]
    fn empty_query_finds_nothing() {
        assert!(index().search("  ,, ", None, 5).is_empty());
    }
}
