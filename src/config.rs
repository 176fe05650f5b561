//! Configuration: `$XDG_CONFIG_HOME/diagraph/config.toml`, overridden by
//! environment variables, overridden by flags (DESIGN section 8).
//!
//! OWNER: providers helper.
