//! The lexicon of the evidence check, as data: `lexicon.tsv` beside this
//! file (its header documents the columns and classes), embedded and
//! parsed once. A word has one concept; a concept has one class and its
//! English and Chinese words. The statement check reads it: connectives
//! are free, links need an evidence text that states them, terms are
//! grounded by any word of their concept that the evidence spells.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;
use std::sync::LazyLock;

const DATA: &str = include_str!("lexicon.tsv");

/// How a statement word of a class is grounded (see the file's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    Connective,
    Approx,
    Negation,
    Link,
    Source,
    Term,
    Unit,
}

impl Class {
    fn parse(s: &str) -> Option<Class> {
        Some(match s {
            "connective" => Class::Connective,
            "approx" => Class::Approx,
            "negation" => Class::Negation,
            "link" => Class::Link,
            "source" => Class::Source,
            "term" => Class::Term,
            "unit" => Class::Unit,
            _ => return None,
        })
    }
}

/// An index into [`Lexicon::concepts`].
pub type ConceptId = u32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concept {
    pub name: String,
    pub class: Class,
    pub en: Vec<String>,
    pub zh: Vec<String>,
}

/// A word's entry: its concept and that concept's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub concept: ConceptId,
    pub class: Class,
}

#[derive(Debug, Default)]
pub struct Lexicon {
    pub version: String,
    pub concepts: Vec<Concept>,
    words: HashMap<String, Entry>,
    /// English words by their Snowball stem (a term's inflections).
    stems: HashMap<String, Entry>,
    /// Chinese words, longest first.
    pub han: Vec<(String, Entry)>,
    /// Rows the loader could not read (a test holds there are none).
    pub errors: Vec<String>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::parse(DATA));

/// The shipped lexicon, parsed on first use.
pub fn lexicon() -> &'static Lexicon {
    &LEXICON
}

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The English Snowball stem of a lower-case word.
pub fn stem(w: &str) -> String {
    STEMMER.stem(w).into_owned()
}

impl Lexicon {
    pub fn parse(data: &str) -> Lexicon {
        let mut lx = Lexicon::default();
        let mut by_name: HashMap<String, ConceptId> = HashMap::new();
        for (n, line) in data.lines().enumerate() {
            if let Some(v) = line.strip_prefix("# version\t") {
                lx.version = v.trim().to_string();
            }
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let [word, lang, class, concept] = cols.as_slice() else {
                lx.errors.push(format!("line {}: not four columns", n + 1));
                continue;
            };
            let Some(class) = Class::parse(class) else {
                lx.errors
                    .push(format!("line {}: unknown class {class:?}", n + 1));
                continue;
            };
            let id = *by_name.entry((*concept).to_string()).or_insert_with(|| {
                lx.concepts.push(Concept {
                    name: (*concept).to_string(),
                    class,
                    en: Vec::new(),
                    zh: Vec::new(),
                });
                (lx.concepts.len() - 1) as ConceptId
            });
            let Some(c) = lx.concepts.get_mut(id as usize) else {
                continue;
            };
            if c.class != class {
                lx.errors
                    .push(format!("line {}: concept {concept} in two classes", n + 1));
                continue;
            }
            let entry = Entry { concept: id, class };
            match *lang {
                "en" => c.en.push((*word).to_string()),
                "zh" => c.zh.push((*word).to_string()),
                other => {
                    lx.errors
                        .push(format!("line {}: unknown language {other:?}", n + 1));
                    continue;
                }
            }
            if let Some(prev) = lx.words.insert((*word).to_string(), entry)
                && prev.concept != id
            {
                lx.errors
                    .push(format!("line {}: {word:?} has two concepts", n + 1));
            }
            if *lang == "zh" && !word.is_ascii() {
                lx.han.push(((*word).to_string(), entry));
            }
            if *lang == "en" && matches!(class, Class::Term | Class::Source | Class::Link) {
                lx.stems.entry(stem(word)).or_insert(entry);
            }
        }
        lx.han
            .sort_by_key(|(w, _)| std::cmp::Reverse(w.chars().count()));
        lx
    }

    /// The entry of a word as written (lower case).
    pub fn entry(&self, w: &str) -> Option<Entry> {
        self.words.get(w).copied()
    }

    /// The entry of an English word, as written or by its stem.
    pub fn entry_en(&self, w: &str, stem: &str) -> Option<Entry> {
        self.entry(w).or_else(|| self.stems.get(stem).copied())
    }

    pub fn concept(&self, id: ConceptId) -> Option<&Concept> {
        self.concepts.get(id as usize)
    }

    /// Every word of a class, English then Chinese, for the Composer's
    /// prompt.
    pub fn words_of(&self, class: Class) -> (Vec<&str>, Vec<&str>) {
        let mut en = Vec::new();
        let mut zh = Vec::new();
        for c in self.concepts.iter().filter(|c| c.class == class) {
            en.extend(c.en.iter().map(String::as_str));
            zh.extend(c.zh.iter().map(String::as_str));
        }
        (en, zh)
    }

    /// The English words of the concepts whose Chinese words `han`
    /// contains (无法获取连接 finds "connection").
    pub fn english_of(&self, han: &str) -> Vec<&str> {
        self.han
            .iter()
            .filter(|(w, e)| e.class == Class::Term && han.contains(w.as_str()))
            .filter_map(|(_, e)| self.concept(e.concept))
            .flat_map(|c| c.en.iter().map(String::as_str))
            .collect()
    }

    /// The words a statement may use freely (connectives, approximation
    /// and negation words), English then Chinese, one line each: what the
    /// Composer's prompt shows.
    pub fn connective_vocabulary(&self) -> String {
        let mut en: Vec<&str> = Vec::new();
        let mut zh: Vec<&str> = Vec::new();
        for class in [Class::Connective, Class::Approx, Class::Negation] {
            let (e, z) = self.words_of(class);
            en.extend(e);
            zh.extend(z);
        }
        format!("English: {}\n   Chinese: {}", en.join(", "), zh.join("、"))
    }

    /// The longest Chinese word of the lexicon at the start of `s`.
    pub fn han_prefix(&self, s: &str) -> Option<(&str, Entry)> {
        self.han
            .iter()
            .find(|(w, _)| s.starts_with(w.as_str()))
            .map(|(w, e)| (w.as_str(), *e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lexicon_reads_whole() {
        let lx = lexicon();
        assert!(lx.errors.is_empty(), "{:?}", lx.errors);
        assert_eq!(lx.version, "1");
        assert!(lx.concepts.len() > 50);
    }

    #[test]
    fn every_word_has_one_concept_and_every_concept_both_languages() {
        let lx = lexicon();
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for c in &lx.concepts {
            assert!(!c.en.is_empty(), "{} has no English row", c.name);
            assert!(!c.zh.is_empty(), "{} has no Chinese row", c.name);
            for w in c.en.iter().chain(&c.zh) {
                if let Some(other) = seen.insert(w, &c.name) {
                    assert_eq!(other, c.name, "{w:?} is in {other} and {}", c.name);
                }
            }
        }
    }

    #[test]
    fn a_concept_with_two_classes_or_a_bad_row_is_reported() {
        let lx = Lexicon::parse("a\ten\tconnective\tx\nb\ten\tterm\tx\nc\ten\tweird\ty\nd\ten\n");
        assert_eq!(lx.errors.len(), 3, "{:?}", lx.errors);
    }

    #[test]
    fn inflections_find_their_term_by_stem() {
        let lx = lexicon();
        let e = lx.entry_en("timeouts", &stem("timeouts")).map(|e| e.class);
        assert_eq!(e, Some(Class::Term));
        assert_eq!(lx.entry("因为").map(|e| e.class), Some(Class::Link));
        assert_eq!(lx.han_prefix("于是服务").map(|(w, _)| w), Some("于是"));
    }
}
