//! OpenAI-compatible chat-completions provider.
//!
//! OWNER: providers helper.
