//! Scenario files (DESIGN section 6): a question, a pack, an optional
//! expected route and scripted model responses.
//!
//! OWNER: engine helper.
